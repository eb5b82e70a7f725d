from django.apps import AppConfig


class ResearchConfig(AppConfig):
    """The researcher's side: dashboard, exports, the REST API."""

    name = "research"
    verbose_name = "Research"
