from django.core.management.base import BaseCommand, CommandError

from research.quality_writes import backfill_verdicts
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Assess and store the answer-quality verdicts that completed participants lack or hold under an old "
        "study file or rules' revision, so that no researcher's view assesses them (idempotent)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", metavar="SLUG", help="the study whose verdicts to fill (default: every study)")

    def handle(self, *args, study, **options):
        slugs = [study] if study else list(Study.objects.order_by("slug").values_list("slug", flat=True).distinct())
        if study and not Study.objects.filter(slug=study).exists():
            raise CommandError(f"no study with slug {study!r}")
        total = 0
        for slug in slugs:

            def progress(done: int, missing: int, slug: str = slug) -> None:
                self.stdout.write(f"{slug}: {done} / {missing} assessed")

            filled = backfill_verdicts(Study.objects.filter(slug=slug), progress=progress)
            self.stdout.write(f"{slug}: {filled} verdict{'' if filled == 1 else 's'} stored")
            total += filled
        self.stdout.write(f"{total} verdict{'' if total == 1 else 's'} stored in all")
