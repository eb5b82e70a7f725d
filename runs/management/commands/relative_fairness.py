from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.cli_args import add_multiple_testing, checked, favourable_direction, significance_level
from runs.relative_fairness import write_study_dp_report
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = "Differential parity of a study, per condition: participants' fair scores vs the AI, disagreements."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study whose fair scores and disagreements to compare with the AI")
        parser.add_argument("--alpha", type=significance_level, default=0.05, help="significance level in (0, 1)")
        parser.add_argument(
            "--favourable",
            type=favourable_direction,
            default="lower",
            help='which risk scores and labels are good for the subject: "lower" (default; a low risk is '
            'favourable) or "higher"; it decides which group the verdicts call favoured',
        )
        add_multiple_testing(parser)
        parser.add_argument("--out", help="report directory (default REPORTS_DIR/<slug>/differential-parity)")

    def handle(self, *args, slug, alpha, favourable: str, out, multiple_testing: str = "holm", **options):
        alpha = checked(alpha, significance_level)
        favourable = checked(favourable, favourable_direction)
        out_dir = Path(out) if out else Path(settings.REPORTS_DIR) / slug / "differential-parity"
        try:
            path, _ = write_study_dp_report(
                slug, out_dir, alpha=alpha, favourable=favourable, multiple_testing=multiple_testing
            )
        except (StudyNotFound, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"report: {path}"))
