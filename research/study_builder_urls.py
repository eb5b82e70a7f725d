"""The study builder's pages, included under ``researcher:`` at ``build/``."""

from django.urls import path

from research import study_builder_views as views

urlpatterns = [
    path("", views.study_build, name="build"),
    path("<str:digest>/", views.study_build_preview, name="build-preview"),
    path("<str:digest>/study.json", views.study_build_download, name="build-download"),
]
