"""REST API for researchers: studies, participants and the tidy exports."""

from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from research.api.pagination import ApiPagination
from research.api.renderers import FILE_RENDERERS, CSVRenderer, TableFileRenderer
from research.api.serializers import (
    ParticipantRowSerializer,
    StudyDetailSerializer,
    StudySerializer,
    StudyStatusRequestSerializer,
    StudyStatusSerializer,
)
from research.downloads import DOWNLOAD_TYPES, table_download
from research.export_stream import STREAMED, streamed_csv_response
from research.participant_samples import DEFAULT_SAMPLE, sample_filter
from research.tables import TABLES, study_tables
from studies.lifecycle import status_history, study_set_status
from studies.models import Study
from studies.selectors import latest_versions, may_edit, visible_versions

if TYPE_CHECKING:
    import pandas as pd

INCLUDE_PILOT = OpenApiParameter(
    "include_pilot", OpenApiTypes.BOOL, OpenApiParameter.QUERY, description="Also pilot participants (default false)."
)


def _include_pilot(request) -> bool:
    """``?include_pilot=1`` (or true/yes): pilot participants are left out of exports unless asked for."""
    return request.query_params.get("include_pilot", "").lower() in ("1", "true", "yes")


def _sample(request) -> str:
    return "all" if _include_pilot(request) else DEFAULT_SAMPLE


def latest_visible(request, slug: str) -> Study:
    """The newest version of ``slug`` the user may see (404 otherwise)."""
    return visible_versions(request.user, slug)[0]


def _frame_page(view: generics.GenericAPIView, frame: "pd.DataFrame", request) -> Response:
    """One page of a table's rows, paged by the API's pagination (``DEFAULT_PAGINATION_CLASS``)."""
    paginator = view.paginator
    if not isinstance(paginator, ApiPagination):
        raise ImproperlyConfigured("DEFAULT_PAGINATION_CLASS must be research.api.pagination.ApiPagination")
    return view.get_paginated_response(paginator.paginate_frame(frame, request))


class StudyList(generics.ListAPIView):
    """The latest version of every study you own or that is shared with you."""

    serializer_class = StudySerializer

    def get_queryset(self):
        return latest_versions(self.request.user)


class StudyDetail(APIView):
    """The latest version of one study, with its file and the list of versions."""

    @extend_schema(responses=StudyDetailSerializer)
    def get(self, request, slug: str):
        return Response(StudyDetailSerializer(latest_visible(request, slug)).data)


class StudyStatus(APIView):
    """The study's lifecycle state (draft, pilot, live, paused, closed) and its latest changes; POST
    ``{"status": ...}`` changes it (logged with who and when), as the dashboard's buttons do."""

    @extend_schema(responses=StudyStatusSerializer)
    def get(self, request, slug: str):
        return Response(self._state(latest_visible(request, slug)))

    @extend_schema(request=StudyStatusRequestSerializer, responses=StudyStatusSerializer)
    def post(self, request, slug: str):
        latest_visible(request, slug)
        if not may_edit(request.user, slug):
            raise PermissionDenied("A viewer cannot change the study's state: ask its owner to make you an editor.")
        wanted = StudyStatusRequestSerializer(data=request.data)
        wanted.is_valid(raise_exception=True)
        study_set_status(slug=slug, status=wanted.validated_data["status"], by=request.user, reason="API")
        return Response(self._state(latest_visible(request, slug)))

    @staticmethod
    def _state(study: Study) -> dict:
        return StudyStatusSerializer({"status": study.status, "history": status_history(study.slug)}).data


class ParticipantList(generics.GenericAPIView):
    """One row per participant (pseudonymous ids), as in the participants export; paged."""

    serializer_class = ParticipantRowSerializer

    @extend_schema(parameters=[INCLUDE_PILOT], responses=ParticipantRowSerializer(many=True))
    def get(self, request, slug: str):
        from research.export import cached_export  # the export stack (pandas) only when rows are asked for

        latest_visible(request, slug)
        frame = cached_export(slug, _sample(request)).participants
        return _frame_page(self, frame, request)


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
        latest_visible(request, slug)
        return Response({"tables": list(study_tables(slug))})


class ExportTable(generics.GenericAPIView):
    """A tidy export table: JSON records, paged (``limit``, ``offset``), or the whole table as CSV
    (``?format=csv``, one download, not paged; the answers table streamed as it is read), or as a
    Parquet, SPSS or Stata file typed and labelled by the codebook (``?format=parquet|sav|dta``, the
    dashboard's downloads). The export is built once per state of the study's data
    (``research.export.cached_export``), not once per page."""

    renderer_classes = [JSONRenderer, CSVRenderer, *FILE_RENDERERS]

    @extend_schema(
        parameters=[
            OpenApiParameter("table", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(TABLES)),
            OpenApiParameter("format", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=list(DOWNLOAD_TYPES)),
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
            **{(200, DOWNLOAD_TYPES[r.format]): OpenApiTypes.BINARY for r in FILE_RENDERERS},
        },
    )
    def get(self, request, slug: str, table: str):
        latest_visible(request, slug)
        tables = study_tables(slug)
        if table not in tables:
            raise Http404(f"Unknown table {table!r} for this study; choose one of {', '.join(tables)}.")
        if isinstance(request.accepted_renderer, TableFileRenderer):
            return table_download(slug, table, _sample(request), request.accepted_renderer.format)
        if request.accepted_renderer.format == CSVRenderer.format and table in STREAMED:
            sample = _sample(request)
            return streamed_csv_response(slug, table, sample_filter(sample), f"{slug}-{table}.csv")
        from research.export import cached_export, table_records

        frame = getattr(cached_export(slug, _sample(request)), table)
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(table_records(frame))
        return _frame_page(self, frame, request)
