from django.apps import AppConfig


class StudiesConfig(AppConfig):
    """Study files: the format, validation, stored versions, bundled templates and the builder."""

    name = "studies"
    verbose_name = "Studies"
