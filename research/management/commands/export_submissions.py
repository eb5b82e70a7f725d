from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from research.export import table_to_csv
from research.submissions import submissions_table
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Write the Prolific submissions to approve, return or reject, with the reason for each "
        "(columns PROLIFIC_PID, SESSION_ID, action, reason; raw Prolific ids)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study whose Prolific submissions to list")
        parser.add_argument("--out", help="CSV file to write (default: print)")
        parser.add_argument("--include-pilot", action="store_true", help="also pilot participants (default: left out)")

    def handle(self, *args, slug, out, include_pilot, **options):
        if not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"no study with slug {slug!r}")
        table = submissions_table(slug, include_pilot=include_pilot)
        counts = table["action"].value_counts()
        summary = ", ".join(f"{counts.get(action, 0)} to {action}" for action in ("approve", "return", "reject"))
        notes = (
            f"{table.attrs['in_progress']} still taking part (not listed); {table.attrs['withdrawn']} withdrew "
            "(not listed: their Prolific ids were deleted at withdrawal)"
        )
        if out:
            Path(out).write_text(table_to_csv(table), encoding="utf-8")
            self.stdout.write(self.style.SUCCESS(f"{len(table)} submissions written to {out}: {summary}"))
            self.stdout.write(notes)
        else:  # the CSV alone on stdout, the summary on stderr
            self.stdout.write(table_to_csv(table), ending="")
            self.stderr.write(f"{summary}; {notes}")
