from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from research.codebook import export_labels
from research.export import export_tables, write_exports
from research.export_formats import FORMATS
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Write the study's export tables as CSV, JSON, Parquet, SPSS (.sav) or Stata (.dta); the last three "
        "typed and labelled from the codebook."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study to export")
        parser.add_argument("--format", choices=FORMATS, default="csv", help="file format of the tables")
        parser.add_argument("--out", default="exports", help="folder to write the tables into")
        parser.add_argument("--include-pilot", action="store_true", help="also pilot participants (default: left out)")

    def handle(self, *args, slug, format, out, include_pilot, **options):
        if not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"no study with slug {slug!r}")
        labels = None if format in ("csv", "json") else export_labels(slug)
        paths = write_exports(export_tables(slug, include_pilot=include_pilot), Path(out), format, labels)
        for path in paths:
            self.stdout.write(f"wrote {path}")
