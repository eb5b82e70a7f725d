from django.core.management.base import BaseCommand, CommandError

from participation.integrity import check_integrity


class Command(BaseCommand):
    help = (
        "Check that every participant has exactly the answers of their saved pages, that withdrawn participants "
        "have no answers or page visits left, that conditions are balanced, that every adaptive decision replays, and "
        "that every active participant's current page renders (listing those who cannot go on, with the error)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study to check")
        parser.add_argument("--real-only", action="store_true", help="ignore simulated participants")

    def handle(self, *args, slug, real_only, **options):
        report = check_integrity(slug, include_simulated=not real_only)
        self.stdout.write(str(report))
        if not report.ok:
            raise CommandError("integrity check failed")
