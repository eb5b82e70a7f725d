"""REST API for researchers: studies, participants and the tidy exports."""

import json
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from fairness.model_audit import SubjectsFileError
from fairness.situation_testing import SituationTestingError
from surveys.analysis_runs import analysis_run_create
from surveys.api.renderers import CSVRenderer
from surveys.api.serializers import (
    AnalysisRequestSerializer,
    AnalysisRunSerializer,
    AuditRequestSerializer,
    AuditRunSerializer,
    ParticipantRowSerializer,
    SituationTestingRequestSerializer,
    StudyDetailSerializer,
    StudySerializer,
)
from surveys.audit_runs import AuditError, audit_run_create
from surveys.export import TABLES, export_tables, table_to_json
from surveys.models import AnalysisRun, AuditRun, Study
from surveys.params import run_situation_testing
from surveys.relative_fairness import study_differential_parity
from surveys.selectors import latest_versions, studies_visible_to
from surveys.uploads import read_csv_upload


def _latest_visible(request, slug: str) -> Study:
    study = studies_visible_to(request.user).filter(slug=slug).order_by("-version").first()
    if study is None:
        raise Http404("No such study among yours.")
    return study


def _records(frame) -> list[dict]:
    return json.loads(table_to_json(frame))


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


class ParticipantList(APIView):
    """One row per participant (pseudonymous ids), as in the participants export."""

    @extend_schema(responses=ParticipantRowSerializer(many=True))
    def get(self, request, slug: str):
        _latest_visible(request, slug)
        return Response(_records(export_tables(slug).participants))


class ExportTable(APIView):
    """A tidy export table as JSON records or CSV (``?format=csv``)."""

    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("table", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(TABLES)),
            OpenApiParameter("format", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=["json", "csv"]),
        ],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request, slug: str, table: str):
        if table not in TABLES:
            raise Http404(f"Unknown table {table!r}; choose one of {', '.join(TABLES)}.")
        _latest_visible(request, slug)
        return Response(_records(getattr(export_tables(slug), table)))


class AnalysisRuns(APIView):
    """List the study's analysis runs (GET) or run the pipeline now and return its results (POST)."""

    @extend_schema(responses=AnalysisRunSerializer(many=True))
    def get(self, request, slug: str):
        study = _latest_visible(request, slug)
        runs = AnalysisRun.objects.filter(study__slug=study.slug).select_related("study")
        return Response(AnalysisRunSerializer(runs, many=True).data)

    @extend_schema(request=AnalysisRequestSerializer, responses={201: AnalysisRunSerializer})
    def post(self, request, slug: str):
        study = _latest_visible(request, slug)
        params = AnalysisRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        seed, n_resamples = params.validated_data["seed"], params.validated_data["n_resamples"]
        out_dir = Path(settings.REPORTS_DIR) / study.slug / f"analysis-{seed}-{timezone.now():%Y%m%d%H%M%S}"
        try:
            run = analysis_run_create(slug=study.slug, out_dir=out_dir, seed=seed, n_resamples=n_resamples)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(AnalysisRunSerializer(run).data, status=status.HTTP_201_CREATED)


class AuditRuns(APIView):
    """List the study's model audits (GET) or run one on an uploaded subjects CSV (POST, multipart:
    ``subjects`` file, optional ``condition``, ``calibration``, ``shown_model``)."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=AuditRunSerializer(many=True))
    def get(self, request, slug: str):
        study = _latest_visible(request, slug)
        runs = AuditRun.objects.filter(study__slug=study.slug).select_related("study")
        return Response(AuditRunSerializer(runs, many=True).data)

    @extend_schema(request=AuditRequestSerializer, responses={201: AuditRunSerializer})
    def post(self, request, slug: str):
        study = _latest_visible(request, slug)
        params = AuditRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        stamp = f"{timezone.now():%Y%m%d%H%M%S%f}"
        out_dir = Path(settings.REPORTS_DIR) / study.slug / f"audit-{stamp}"
        out_dir.mkdir(parents=True, exist_ok=True)
        upload = out_dir / "subjects.csv"
        with upload.open("wb") as handle:
            for chunk in data["subjects"].chunks():
                handle.write(chunk)
        try:
            run = audit_run_create(
                slug=study.slug,
                subjects_file=upload,
                out_dir=out_dir,
                condition=data.get("condition") or None,
                calibration_id=data.get("calibration"),
                shown_model=data.get("shown_model") or "study_ai",
            )
        except (AuditError, SubjectsFileError) as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(AuditRunSerializer(run).data, status=status.HTTP_201_CREATED)


class StudyDifferentialParity(APIView):
    """Differential parity of a study's answers: fair scores vs the AI, disagreements, conditions."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request, slug: str):
        study = _latest_visible(request, slug)
        tables, _ = study_differential_parity(study.slug)
        return Response({name: _records(frame) for name, frame in tables.items()})


class SituationTestingRun(APIView):
    """Run ST / CST / CF on an uploaded CSV (multipart: ``data``, optional ``counterfactuals``, and the
    parameters) and return the counts per k and the flagged complainants with their neighbours."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=SituationTestingRequestSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request):
        params = SituationTestingRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        p = params.validated_data
        try:
            data = read_csv_upload(p["data"], name="data", sep=p["sep"])
            cf = p.get("counterfactuals") and read_csv_upload(
                p["counterfactuals"], name="counterfactuals", sep=p["sep"]
            )
            result = run_situation_testing(data, cf, p)
        except (SituationTestingError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        k_small = min(p["k"])
        method = "CSTwo" if cf is not None else "ST"
        flagged = result.individuals[(result.individuals["k"] == k_small) & result.individuals[method]].head(100)
        return Response(
            {
                "counts": _records(result.counts),
                "flagged": [
                    {
                        "complainant": int(c),
                        "delta_p": float(d),
                        **{g: [int(i) for i in ids] for g, ids in result.groups_of(int(c), k_small, method).items()},
                    }
                    for c, d in zip(flagged["complainant"], flagged[f"{method}_delta"], strict=True)
                ],
                "flagged_k": k_small,
                "flagged_method": method,
            }
        )
