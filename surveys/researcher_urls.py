from django.urls import path

from surveys import researcher_views as views

app_name = "researcher"
urlpatterns = [
    path("", views.study_list, name="studies"),
    path("studies/<slug:slug>/", views.dashboard, name="dashboard"),
    path("studies/<slug:slug>/report/<str:filename>", views.latest_report_file, name="report"),
    path("studies/<slug:slug>/audit/<str:filename>", views.latest_audit_file, name="audit"),
    path("runs/analysis/<int:run_id>/<str:filename>", views.analysis_file, name="analysis-file"),
    path("runs/audit/<int:run_id>/<str:filename>", views.audit_file, name="audit-file"),
    path("jobs/<uuid:job_id>/<str:filename>", views.job_file, name="job-file"),
    path("studies/<slug:slug>/export/<str:table>.<str:fmt>", views.export_download, name="export"),
    path("studies/<slug:slug>/submissions.csv", views.submissions_download, name="submissions"),
    path("studies/<slug:slug>/pilot/delete/", views.pilot_delete, name="pilot-delete"),
]
