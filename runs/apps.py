from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs and background jobs"
    default_auto_field = "django.db.models.BigAutoField"
