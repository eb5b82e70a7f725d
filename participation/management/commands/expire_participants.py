from django.core.management.base import BaseCommand, CommandError

from participation.services import participants_expire
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Mark active participants past their study's time limit (time_limit.max_minutes) as timed_out; "
        "run it periodically (e.g. every few minutes from cron). Participants are also timed out on their next request."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", nargs="?", help="one study (default: every study with a time limit)")

    def handle(self, *args, slug, **options):
        if slug and not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"no study with slug {slug!r}")
        expired = participants_expire(slug=slug)
        self.stdout.write(self.style.SUCCESS(f"{expired} participant(s) timed out"))
