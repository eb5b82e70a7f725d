from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs and background jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from runs import adaptive  # noqa: F401  (answers participation.adaptive.refit_wanted with a job)
