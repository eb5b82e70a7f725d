from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Researchers' accounts: revocable server-side sessions, "log out everywhere", login throttling."""

    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import signals  # noqa: F401 - connects the failed-login logger
