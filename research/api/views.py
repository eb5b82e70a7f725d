"""REST API for researchers: studies, participants and the tidy exports."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import APIException
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from research.api.renderers import CSVRenderer
from research.api.serializers import (
    AnalysisRequestSerializer,
    AnalysisRunSerializer,
    AuditRequestSerializer,
    AuditRunSerializer,
    DifferentialParityRequestSerializer,
    JobSerializer,
    ParticipantRowSerializer,
    PlanRequestSerializer,
    SituationTestingRequestSerializer,
    StudyDetailSerializer,
    StudySerializer,
)
from research.export import TABLES, cached_export, study_tables, table_records
from research.participant_samples import DEFAULT_SAMPLE
from runs.models import Job
from runs.selectors import jobs_visible_to
from runs.services import job_create
from runs.storage import RunStorageError
from studies.selectors import latest_versions, visible_versions
from surveys.models import AnalysisRun, AuditRun, Study

INCLUDE_PILOT = OpenApiParameter(
    "include_pilot", OpenApiTypes.BOOL, OpenApiParameter.QUERY, description="Also pilot participants (default false)."
)


def _include_pilot(request) -> bool:
    """``?include_pilot=1`` (or true/yes): pilot participants are left out of exports unless asked for."""
    return request.query_params.get("include_pilot", "").lower() in ("1", "true", "yes")


def _sample(request) -> str:
    return "all" if _include_pilot(request) else DEFAULT_SAMPLE


def _latest_visible(request, slug: str) -> Study:
    return visible_versions(request.user, slug)[0]


class StorageUnavailable(APIException):
    status_code = status.HTTP_507_INSUFFICIENT_STORAGE
    default_code = "storage_unavailable"
    default_detail = "The upload could not be stored; nothing was kept. Try again later."


def _accepted(**job_fields) -> Response:
    """Queue a job; answer 202 Accepted with its URL in ``Location`` and the job in the body."""
    try:
        job = job_create(**job_fields)
    except RunStorageError as exc:
        raise StorageUnavailable(f"{exc}; nothing was kept. Try again later.") from exc
    body = JobSerializer(job).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


def _start(request, slug: str, kind: str, serializer_class, uploads: tuple[str, ...] = ()) -> Response:
    """Validate a job's parameters (400 with field errors), take its upload fields out of them and
    queue it on the latest visible version of ``slug`` (:func:`_accepted`)."""
    study = _latest_visible(request, slug)
    params = serializer_class(data=request.data, context={"study": study})
    params.is_valid(raise_exception=True)
    data = dict(params.validated_data)
    files = {name: data.pop(name) for name in uploads}
    return _accepted(kind=kind, user=request.user, study=study, params=data, uploads=files)


class StudyList(generics.ListAPIView):
    """The latest version of every study you own or that is shared with you."""

    serializer_class = StudySerializer

    def get_queryset(self):
        return latest_versions(self.request.user)


class StudyDetail(APIView):
    """The latest version of one study, with its file and the list of versions."""

    @extend_schema(responses=StudyDetailSerializer)
    def get(self, request, slug: str):
        return Response(StudyDetailSerializer(_latest_visible(request, slug)).data)


class ParticipantList(generics.GenericAPIView):
    """One row per participant (pseudonymous ids), as in the participants export; paged."""

    serializer_class = ParticipantRowSerializer

    @extend_schema(parameters=[INCLUDE_PILOT], responses=ParticipantRowSerializer(many=True))
    def get(self, request, slug: str):
        _latest_visible(request, slug)
        frame = cached_export(slug, _sample(request)).participants
        return self.get_paginated_response(self.paginator.paginate_frame(frame, request))


class ExportTableList(APIView):
    """The export tables this study has (its design decides: answers, participants and pages
    always; questionnaire, pairs, disagreements when it has such blocks)."""

    @extend_schema(
        operation_id="studies_export_tables",
        responses=inline_serializer(
            "ExportTableNames", {"tables": serializers.ListField(child=serializers.ChoiceField(choices=TABLES))}
        ),
    )
    def get(self, request, slug: str):
        _latest_visible(request, slug)
        return Response({"tables": list(study_tables(slug))})


class ExportTable(generics.GenericAPIView):
    """A tidy export table: JSON records, paged (``limit``, ``offset``), or the whole table as CSV
    (``?format=csv``, one download, not paged). The export is built once per state of the study's
    data (``research.export.cached_export``), not once per page."""

    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("table", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(TABLES)),
            OpenApiParameter("format", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=["json", "csv"]),
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY, description="Rows per page (JSON)."),
            OpenApiParameter("offset", OpenApiTypes.INT, OpenApiParameter.QUERY, description="First row (JSON)."),
            INCLUDE_PILOT,
        ],
        responses={
            (200, "application/json"): inline_serializer(
                "PaginatedTableRows",
                {
                    "count": serializers.IntegerField(),
                    "next": serializers.URLField(allow_null=True),
                    "previous": serializers.URLField(allow_null=True),
                    "results": serializers.ListField(child=serializers.DictField(), help_text="The table's rows."),
                },
            ),
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request, slug: str, table: str):
        _latest_visible(request, slug)
        tables = study_tables(slug)
        if table not in tables:
            raise Http404(f"Unknown table {table!r} for this study; choose one of {', '.join(tables)}.")
        frame = getattr(cached_export(slug, _sample(request)), table)
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(table_records(frame))
        return self.get_paginated_response(self.paginator.paginate_frame(frame, request))


class AnalysisRuns(generics.ListAPIView):
    """List the study's analysis runs (GET, paged) or start one as a background job (POST: 202 and
    the job's URL in ``Location``; the job's result names the run, its report and calibrations)."""

    serializer_class = AnalysisRunSerializer

    def get_queryset(self):
        study = _latest_visible(self.request, self.kwargs["slug"])
        return AnalysisRun.objects.filter(study__slug=study.slug).select_related("study").order_by("-created_at", "-pk")

    @extend_schema(request=AnalysisRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.ANALYSIS, AnalysisRequestSerializer)


class AuditRuns(generics.ListAPIView):
    """List the study's model audits (GET, paged) or start one on an uploaded subjects CSV as a
    background job (POST, multipart: ``subjects`` file, optional ``condition``, ``calibration``,
    ``shown_model``)."""

    parser_classes = [MultiPartParser, FormParser]
    serializer_class = AuditRunSerializer

    def get_queryset(self):
        study = _latest_visible(self.request, self.kwargs["slug"])
        return (
            AuditRun.objects.filter(study__slug=study.slug)
            .select_related("study", "condition")
            .order_by("-created_at", "-pk")
        )

    @extend_schema(request=AuditRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.AUDIT, AuditRequestSerializer, uploads=("subjects",))


class StudyDifferentialParity(APIView):
    """Differential parity of a study's answers per condition (fair scores vs the AI, disagreements):
    POST starts a run as a background job; GET returns the tables of the latest finished run."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request, slug: str):
        study = _latest_visible(request, slug)
        job = (
            Job.objects.filter(study__slug=study.slug, kind=Job.Kind.DIFFERENTIAL_PARITY, status=Job.Status.SUCCEEDED)
            .order_by("-finished_at")
            .first()
        )
        if job is None:
            raise Http404("No differential-parity run of this study yet: POST to this URL to start one.")
        return Response(job.result["tables"])

    @extend_schema(request=DifferentialParityRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.DIFFERENTIAL_PARITY, DifferentialParityRequestSerializer)


class StudyPlans(APIView):
    """Start plan_study on the study's own file as a background job (POST, JSON: ``n``, ``studies``,
    ``seed``, ``a1``, ``a2``, ``noise``, ``participant_intercept_sd``, ``participant_slope_sd``,
    ``stimulus_sd``; the command's ranges and defaults). The job's result has the table with Monte
    Carlo SEs; its files are report.html, plan.csv and results.json."""

    @extend_schema(request=PlanRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.PLAN, PlanRequestSerializer)


class SituationTestingRun(APIView):
    """Start ST / CST / CF on an uploaded CSV as a background job (multipart: ``data``, optional
    ``counterfactuals``, and the parameters); the job's result has the counts per k and the flagged
    complainants with their neighbours."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=SituationTestingRequestSerializer, responses={202: JobSerializer})
    def post(self, request):
        params = SituationTestingRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        p = dict(params.validated_data)
        uploads = {name: p.pop(name) for name in ("data", "counterfactuals") if p.get(name)}
        p.pop("counterfactuals", None)
        return _accepted(kind=Job.Kind.SITUATION_TESTING, user=request.user, params=p, uploads=uploads)


class JobList(generics.ListAPIView):
    """Your background jobs and those of your studies, newest first."""

    serializer_class = JobSerializer

    def get_queryset(self):
        return jobs_visible_to(self.request.user).order_by("-created_at", "pk")


class JobDetail(APIView):
    """One job: status, progress, log, and its result or error."""

    @extend_schema(responses=JobSerializer)
    def get(self, request, job_id):
        job = jobs_visible_to(request.user).filter(pk=job_id).first()
        if job is None:
            raise Http404("No such job among yours.")
        return Response(JobSerializer(job).data)
