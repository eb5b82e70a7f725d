from django.core.management.base import BaseCommand, CommandError

from research.prolific_client import ProlificClient, ProlificError
from research.prolific_services import prolific_sync


class Command(BaseCommand):
    help = (
        "Reconcile every Prolific submission of the study (GET /submissions/?study=) and record its Prolific "
        "status: what webhook events that never arrived would have recorded. The job worker runs it every "
        "PROLIFIC_SYNC_MINUTES for a published study."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study published with prolific_publish")

    def handle(self, *args, slug, **options):
        try:
            synced = prolific_sync(slug=slug, client=ProlificClient())
        except (ProlificError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{synced.submissions} submissions on Prolific, {synced.changed} changed")
