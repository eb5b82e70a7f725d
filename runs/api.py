"""REST API for researchers' background jobs: start an analysis, audit, differential-parity run,
plan or situation test (202 and the job's URL), list a study's runs, and poll jobs."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from research.api.views import latest_visible
from runs.models import AnalysisRun, AuditRun, Job, Preregistration
from runs.selectors import jobs_visible_to, may_cancel
from runs.serializers import (
    AnalysisRequestSerializer,
    AnalysisRunSerializer,
    AuditRequestSerializer,
    AuditRunSerializer,
    DifferentialParityRequestSerializer,
    JobSerializer,
    PlanRequestSerializer,
    PreregistrationRequestSerializer,
    PreregistrationSerializer,
    SituationTestingRequestSerializer,
)
from runs.services import JobQuotaExceeded, job_cancel, job_create
from runs.storage import RunStorageError
from studies.selectors import may_edit


class StorageUnavailable(APIException):
    status_code = status.HTTP_507_INSUFFICIENT_STORAGE
    default_code = "storage_unavailable"
    default_detail = "The upload could not be stored; nothing was kept. Try again later."


class TooManyJobs(APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "job_quota"
    default_detail = "You have too many jobs queued or running; start this one when one of them has finished."


def _accepted(**job_fields) -> Response:
    """Queue a job; answer 202 Accepted with its URL in ``Location`` and the job in the body (429
    beyond the researcher's job quota, 507 when an upload cannot be stored)."""
    try:
        job = job_create(**job_fields)
    except JobQuotaExceeded as exc:
        raise TooManyJobs(str(exc)) from exc
    except RunStorageError as exc:
        raise StorageUnavailable(f"{exc}; nothing was kept. Try again later.") from exc
    body = JobSerializer(job).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


def _start(request, slug: str, kind: str, serializer_class, uploads: tuple[str, ...] = ()) -> Response:
    """Validate a job's parameters (400 with field errors), take its upload fields out of them and
    queue it on the latest visible version of ``slug`` (:func:`_accepted`)."""
    study = latest_visible(request, slug)
    if not may_edit(request.user, slug):
        raise PermissionDenied("A viewer cannot start runs of the study: ask its owner to make you an editor.")
    params = serializer_class(data=request.data, context={"study": study, "researcher": request.user})
    params.is_valid(raise_exception=True)
    data = dict(params.validated_data)
    files = {name: data.pop(name) for name in uploads}
    return _accepted(kind=kind, user=request.user, study=study, params=data, uploads=files)


class AnalysisRuns(generics.ListAPIView):
    """List the study's analysis runs (GET, paged) or start one as a background job (POST: 202 and
    the job's URL in ``Location``; the job's result names the run, its report and calibrations)."""

    serializer_class = AnalysisRunSerializer

    def get_queryset(self):
        study = latest_visible(self.request, self.kwargs["slug"])
        return AnalysisRun.objects.filter(study__slug=study.slug).select_related("study").order_by("-created_at", "-pk")

    @extend_schema(request=AnalysisRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.ANALYSIS, AnalysisRequestSerializer)


class StudyPreregistration(APIView):
    """The study's preregistration (GET: 404 when it has none) or register its analysis plan (POST: a background
    job; 409 when it is registered already, since a registration is never replaced)."""

    @extend_schema(responses={200: PreregistrationSerializer})
    def get(self, request, slug: str):
        study = latest_visible(request, slug)
        registration = Preregistration.objects.filter(study__slug=study.slug).select_related("study").first()
        if registration is None:
            raise Http404("This study is not registered: POST its plan to this URL.")
        return Response(PreregistrationSerializer(registration).data)

    @extend_schema(request=PreregistrationRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        study = latest_visible(request, slug)
        if not may_edit(request.user, slug):
            raise PermissionDenied("A viewer cannot register the study: ask its owner to make you an editor.")
        if Preregistration.objects.filter(study__slug=study.slug).exists():
            return Response(
                {"detail": "This study is registered already: a registration is never replaced."},
                status=status.HTTP_409_CONFLICT,
            )
        params = PreregistrationRequestSerializer(data=request.data, context={"study": study})
        params.is_valid(raise_exception=True)
        return _accepted(
            kind=Job.Kind.PREREGISTRATION, user=request.user, study=study, params={"plan": params.plan()}, uploads={}
        )


class AuditRuns(generics.ListAPIView):
    """List the study's model audits (GET, paged) or start one on an uploaded subjects CSV as a
    background job (POST, multipart: ``subjects`` file, optional ``condition``, ``calibration``,
    ``shown_model``)."""

    parser_classes = [MultiPartParser, FormParser]
    serializer_class = AuditRunSerializer

    def get_queryset(self):
        study = latest_visible(self.request, self.kwargs["slug"])
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
        study = latest_visible(request, slug)
        job = (
            Job.objects.filter(study__slug=study.slug, kind=Job.Kind.DIFFERENTIAL_PARITY, status=Job.Status.SUCCEEDED)
            .order_by("-finished_at")
            .first()
        )
        if job is None:
            raise Http404("No differential-parity run of this study yet: POST to this URL to start one.")
        if job.result is None:  # job_succeed stores the result with the status
            raise ValueError(f"job {job.pk} succeeded without a result")
        return Response(job.result["tables"])

    @extend_schema(request=DifferentialParityRequestSerializer, responses={202: JobSerializer})
    def post(self, request, slug: str):
        return _start(request, slug, Job.Kind.DIFFERENTIAL_PARITY, DifferentialParityRequestSerializer)


class StudyPlans(APIView):
    """Start plan_study on the study's own file (its effort design, ``simulation.effort_design``: 400 with the
    reason when it has none) as a background job (POST, JSON: ``n``, ``studies``,
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


def visible_job(user, job_id) -> Job:
    """The job if ``user`` may see it (its study's owner, collaborators, superusers; the starter of a
    job tied to no study), else 404."""
    job = jobs_visible_to(user).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job among yours.")
    return job


class JobAlreadyFinished(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "job_finished"


class JobCancel(APIView):
    """Cancel a queued or running job (POST): 200 and the job, now ``cancelled`` (a running job is
    stopped by its worker within a second); 409 when it has already ended."""

    @extend_schema(request=None, responses={200: JobSerializer})
    def post(self, request, job_id):
        job = visible_job(request.user, job_id)
        if not may_cancel(request.user, job):
            raise PermissionDenied("A viewer of the study cannot cancel its jobs.")
        if not job_cancel(job_id=job.pk, user=request.user):
            job.refresh_from_db()
            raise JobAlreadyFinished(f"The job has already ended ({job.status}); there is nothing to cancel.")
        job.refresh_from_db()
        return Response(JobSerializer(job).data)


class JobDetail(APIView):
    """One job: status, progress, log, and its result or error."""

    @extend_schema(responses=JobSerializer)
    def get(self, request, job_id):
        return Response(JobSerializer(visible_job(request.user, job_id)).data)
