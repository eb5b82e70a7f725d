"""The researcher's pages (namespace ``researcher``): studies, uploads, the builder and the dashboard
(``research``), runs, jobs and their files (``runs``)."""

from django.urls import path, re_path

from research import preview, study_builder_views, study_upload_views
from research import researcher_views as views
from runs import preregistration_views, run_views, situation_views, study_file_views
from runs.report_assets import ASSETS_DIR, report_asset

app_name = "researcher"
urlpatterns = [
    path("", views.study_list, name="studies"),
    path("upload/", study_file_views.study_upload, name="upload"),
    path("upload/<str:digest>/", study_upload_views.study_upload_preview, name="upload-preview"),
    path("load/<str:digest>/", study_file_views.study_load_start, name="study-load"),
    path("build/", study_file_views.study_build, name="build"),
    path("build/<str:digest>/", study_builder_views.study_build_preview, name="build-preview"),
    path("build/<str:digest>/study.json", study_builder_views.study_build_download, name="build-download"),
    path("build/<str:digest>/design-check/", study_file_views.study_build_design_check, name="build-design-check"),
    path("studies/<slug:slug>/", run_views.dashboard, name="dashboard"),
    path("studies/<slug:slug>/runs/", run_views.run_list, name="runs"),
    path("studies/<slug:slug>/start/", run_views.run_start, name="start"),
    path("studies/<slug:slug>/preregistration/", preregistration_views.preregistration, name="preregistration"),
    path(
        "studies/<slug:slug>/preregistration/bundle.zip",
        preregistration_views.preregistration_bundle,
        name="preregistration-bundle",
    ),
    path("studies/<slug:slug>/start/<str:kind>/", run_views.run_start, name="start-run"),
    path("studies/<slug:slug>/report/<str:filename>", run_views.latest_report_file, name="report"),
    path("studies/<slug:slug>/audit/<str:filename>", run_views.latest_audit_file, name="audit"),
    path("runs/analysis/<int:run_id>/<str:filename>", run_views.analysis_file, name="analysis-file"),
    path("runs/audit/<int:run_id>/<str:filename>", run_views.audit_file, name="audit-file"),
    path("situation-testing/", situation_views.situation_testing_start, name="situation-testing"),
    path("jobs/<uuid:job_id>/", run_views.job_detail, name="job"),
    path("jobs/<uuid:job_id>/cancel/", run_views.job_cancel_view, name="job-cancel"),
    path("jobs/<uuid:job_id>/<str:filename>", run_views.job_file, name="job-file"),
    path("studies/<slug:slug>/export/<str:table>.<str:fmt>", views.export_download, name="export"),
    path("studies/<slug:slug>/codebook.<str:fmt>", views.codebook_download, name="codebook"),
    path("studies/<slug:slug>/submissions.csv", views.submissions_download, name="submissions"),
    path("studies/<slug:slug>/prolific/", views.prolific_action, name="prolific-action"),
    path("studies/<slug:slug>/pilot/delete/", views.pilot_delete, name="pilot-delete"),
    path("studies/<slug:slug>/status/", views.study_status_change, name="study-status"),
    path("studies/<slug:slug>/collaborators/", views.collaborators_change, name="collaborators"),
    path("studies/<slug:slug>/v<int:version>/preview/", preview.study_preview, name="preview"),
    path("studies/<slug:slug>/v<int:version>/preview/<int:number>/", preview.study_preview_page, name="preview-page"),
    # a stored report's relative report-assets/... (under any report address): the static files
    re_path(rf"^(?:.+/)?{ASSETS_DIR}/(?P<name>[\w./-]+)$", report_asset, name="report-asset"),
]
