from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate


def install_answer_rules(sender: AppConfig, using: str = "default", **kwargs: object) -> None:
    """After every ``migrate`` (and ``flush``): the answers table's rules from the task registry as it is
    now (``participation.answer_rules``), so a new task type needs no migration."""
    from participation.answer_rules import install, table_exists

    connection = connections[using]
    if table_exists(connection):
        install(connection)


class ParticipationConfig(AppConfig):
    """The participant's path: start link, consent, pages, answers, completion."""

    name = "participation"
    verbose_name = "Participation"

    def ready(self) -> None:
        post_migrate.connect(install_answer_rules, sender=self)
