from django.core.management.base import BaseCommand, CommandError

from participation.services import pilot_participants_delete
from studies.models import Study


class Command(BaseCommand):
    help = "Delete a study's pilot participants (those who came through its pilot link) with all their answers."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study whose pilot participants to delete")

    def handle(self, *args, slug, **options):
        if not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"no study with slug {slug!r}")
        deleted = pilot_participants_delete(slug=slug)
        self.stdout.write(self.style.SUCCESS(f"{deleted} pilot participant(s) of {slug} deleted with their answers"))
