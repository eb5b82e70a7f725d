from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from participation.models import Participant
from participation.services import InvalidParticipantId, normalise_external_id, participant_withdraw


class Command(BaseCommand):
    help = "Withdraw a participant on request: delete their answers (by pseudonym or Prolific id)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study the participant took part in")
        parser.add_argument("participant", help="pseudonymous participant_id (UUID) or the Prolific id")

    def handle(self, *args, slug, participant, **options):
        try:
            query = Q(external_id=normalise_external_id(participant))
        except InvalidParticipantId:
            query = Q(external_id=participant)
        if len(participant) == 36:
            query |= Q(pseudonym=participant)
        found = Participant.objects.filter(query, study__slug=slug).first()
        if found is None:
            raise CommandError(f"no participant {participant!r} in study {slug!r}")
        participant_withdraw(participant_id=found.pk)
        self.stdout.write(self.style.SUCCESS(f"participant {found.pseudonym} withdrawn; answers deleted"))
