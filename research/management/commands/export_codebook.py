from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from research.codebook import write_codebook
from studies.models import Study


class Command(BaseCommand):
    help = "Write codebook.csv and codebook.md: every column of every export table of a study."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study whose codebook to write")
        parser.add_argument("--out", default="exports", help="folder to write into (default: exports)")

    def handle(self, *args, slug, out, **options):
        if not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"no study with slug {slug!r}")
        for path in write_codebook(slug, Path(out)):
            self.stdout.write(f"wrote {path}")
