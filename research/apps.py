from django.apps import AppConfig
from django.db.models.signals import post_save


class ResearchConfig(AppConfig):
    """The researcher's side: dashboard, exports, the REST API, the study on Prolific."""

    name = "research"
    verbose_name = "Research"

    def ready(self) -> None:
        from participation.models import Participant
        from participation.services import participant_completed
        from research.prolific_services import forget_withdrawn
        from research.quality_verdicts import forget_withdrawn_verdict
        from research.quality_writes import store_completed_verdict

        post_save.connect(forget_withdrawn, sender=Participant, dispatch_uid="prolific_forget_withdrawn")
        post_save.connect(forget_withdrawn_verdict, sender=Participant, dispatch_uid="quality_forget_withdrawn")
        participant_completed.connect(store_completed_verdict, dispatch_uid="quality_verdict_on_completion")
