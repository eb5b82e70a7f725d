from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.cli_args import add_multiple_testing, at_least_one, checked, cut_points
from core.progress import ProgressBar
from fairness.group_options import MIN_GROUP_SIZE, MIN_SUBJECT_GROUP
from runs.analysis_runs import analysis_run_create
from runs.design_analysis import GroupOptions
from runs.report_assets import report_address
from runs.reports.deviations import deviations_sentence
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = (
        "Run the study's statistics (every task block by rater group; with effort-rating pair_distance blocks "
        "Tables 2-5, BTS, calibration) and write an HTML/JSON/CSV report."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study to analyse")
        parser.add_argument("--out", help="report directory (default REPORTS_DIR/<slug>/analysis-<seed>)")
        parser.add_argument(
            "--seed", type=int, default=1, help="seed of the bootstrap resamples (stored with the result)"
        )
        parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
        parser.add_argument("--include-pilot", action="store_true", help="also pilot participants (default: left out)")
        parser.add_argument(
            "--by",
            action="append",
            default=[],
            metavar="QUESTION",
            help="split by this questionnaire question, or by language (the participant's); "
            "repeat to combine: --by role --by age_band (default: one rater group, 'all')",
        )
        parser.add_argument(
            "--generalise",
            choices=["stimuli", "none"],
            help="stimuli: alpha's CI resamples stimulus pairs too (generalises to other pairs); none: participants "
            "only (for the study's own pairs). Default: the study file's analysis.generalise, else none",
        )
        add_multiple_testing(parser)
        parser.add_argument(
            "--min-group-size",
            type=at_least_one("--min-group-size"),
            default=MIN_GROUP_SIZE,
            help=f"rater groups with fewer participants are 'too few to compare' (default {MIN_GROUP_SIZE})",
        )
        parser.add_argument(
            "--min-subject-group",
            type=at_least_one("--min-subject-group"),
            default=MIN_SUBJECT_GROUP,
            help=f"subject groups with fewer subjects are 'too few to compare' (default {MIN_SUBJECT_GROUP})",
        )
        parser.add_argument(
            "--pool-small", action="store_true", help="pool the groups below the minimum into 'other' instead"
        )
        parser.add_argument(
            "--bins",
            action="append",
            default=[],
            type=cut_points,
            metavar="COLUMN=CUTS",
            help="cut points of a numeric subject-group column, e.g. --bins age=25,45 (< 25, 25 to < 45, >= 45); "
            "default: the pool's quartiles for a numeric column with more than 5 values",
        )
        parser.add_argument(
            "--deviation-reason",
            default="",
            metavar="TEXT",
            help="a preregistered study: why this analysis deviates from the registered plan (needed when it does; "
            "the report lists every deviation with it)",
        )
        parser.add_argument(
            "--include-incomplete",
            action="store_true",
            help="also analyse participants who have not completed (default: completed participants only)",
        )

    def handle(
        self, *args, slug, out, seed, resamples, include_pilot, include_incomplete, by, generalise, **options
    ) -> None:
        groups: GroupOptions = {
            "min_group_size": checked(options["min_group_size"], at_least_one("--min-group-size")),
            "min_subject_group": checked(options["min_subject_group"], at_least_one("--min-subject-group")),
            "pool_small": options["pool_small"],
            "bins": dict(options["bins"]),
        }
        out_dir = Path(out) if out else Path(settings.REPORTS_DIR) / slug / f"analysis-{seed}"
        bars: dict[str, ProgressBar] = {}

        def progress(label: str, done: int, total: int) -> None:
            bars.setdefault(label, ProgressBar(total, label, self.stderr))(done)

        try:
            run = analysis_run_create(
                slug=slug,
                out_dir=out_dir,
                seed=seed,
                n_resamples=resamples,
                include_incomplete=include_incomplete,
                include_pilot=include_pilot,
                progress=progress,
                by=by,
                generalise=generalise,
                groups=groups,
                multiple_testing=options["multiple_testing"],
                deviation_reason=options["deviation_reason"],
            )
        except (StudyNotFound, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(run.results["sample"]["sentence"])
        if run.results.get("deviations"):
            self.stdout.write(deviations_sentence(run.results["deviations"]))
        for cal in run.calibrations.all():
            self.stdout.write(f"  {cal}  95% CI [{cal.ci_low:.4f}, {cal.ci_high:.4f}] ({cal.estimand_text})")
        self.stdout.write(self.style.SUCCESS(f"report: {out_dir / 'report.html'}"))
        self.stdout.write(f"on the dashboard: {report_address('researcher:analysis-file', run.pk)}")
