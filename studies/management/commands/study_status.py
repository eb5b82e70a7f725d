from django.core.management.base import BaseCommand, CommandError

from studies.lifecycle import STATUSES, study_set_status
from studies.management.owner import owner_named
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Put a study in a lifecycle state: draft or pilot (pilot links only), live (open to everyone), "
        "paused or closed (no one new starts; those who started may finish). The change is logged."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument("status", choices=STATUSES, help="the state to put the study in (every version)")
        parser.add_argument("--by", help="username recorded as making the change (default: none, the command line)")

    def handle(self, *args, slug, status, by=None, **options):
        try:
            changed = study_set_status(slug=slug, status=status, by=owner_named(by), reason="manage.py study_status")
        except Study.DoesNotExist as exc:
            raise CommandError(f"no study with slug {slug!r}") from exc
        self.stdout.write(self.style.SUCCESS(f"{slug}: {status}" if changed else f"{slug}: already {status}"))
