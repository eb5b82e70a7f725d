from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    """The participant's path: start link, consent, pages, answers, completion."""

    name = "participation"
    verbose_name = "Participation"
