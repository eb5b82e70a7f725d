"""The researchers' REST API: studies and exports (``research.api``), jobs and runs (``runs.api``)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from research.api import prolific, views
from research.api.docs import ApiDocs
from runs import api as run_api

urlpatterns = [
    path("studies/", views.StudyList.as_view(), name="api-studies"),
    path("studies/<slug:slug>/", views.StudyDetail.as_view(), name="api-study"),
    path("studies/<slug:slug>/status/", views.StudyStatus.as_view(), name="api-study-status"),
    path("studies/<slug:slug>/prolific/", prolific.ProlificPanel.as_view(), name="api-prolific"),
    path("studies/<slug:slug>/participants/", views.ParticipantList.as_view(), name="api-participants"),
    path("studies/<slug:slug>/export/", views.ExportTableList.as_view(), name="api-export-tables"),
    path("studies/<slug:slug>/export/<str:table>/", views.ExportTable.as_view(), name="api-export"),
    path("studies/<slug:slug>/analyses/", run_api.AnalysisRuns.as_view(), name="api-analyses"),
    path("studies/<slug:slug>/audits/", run_api.AuditRuns.as_view(), name="api-audits"),
    path("studies/<slug:slug>/differential-parity/", run_api.StudyDifferentialParity.as_view(), name="api-dp"),
    path("studies/<slug:slug>/plans/", run_api.StudyPlans.as_view(), name="api-plans"),
    path("studies/<slug:slug>/preregistration/", run_api.StudyPreregistration.as_view(), name="api-preregistration"),
    path("situation-testing/", run_api.SituationTestingRun.as_view(), name="api-situation-testing"),
    path("jobs/", run_api.JobList.as_view(), name="api-jobs"),
    path("jobs/<uuid:job_id>/", run_api.JobDetail.as_view(), name="api-job"),
    path("jobs/<uuid:job_id>/cancel/", run_api.JobCancel.as_view(), name="api-job-cancel"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", ApiDocs.as_view(), name="api-docs"),
]
