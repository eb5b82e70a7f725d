from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.cli_args import add_multiple_testing
from fairness.model_audit import SubjectsFileError
from fairness.sampling_options import BOUNDS, MAX_PAIRS
from runs.audit_parameters import DEFAULTS, AuditParameters, sampling_problems
from runs.audit_runs import STAGES, AuditError, audit_run_create
from runs.human_source_options import OPTIONS, SURROGATES
from runs.human_sources import SourceError, SourceErrors
from runs.report_assets import report_address
from runs.stage_progress import StageProgress
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = (
        "Audit the models in a subjects CSV (id, score_<model> and/or label_<model>): group metrics by the --groups "
        "columns against --outcome-column, what people said in studies (--metric-from, --utility-from, "
        "--features-from), and effort-aware fairness when the subjects carry x_<time> effort series."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study slug (its calibration and yes/no feedback)")
        parser.add_argument(
            "--subjects",
            required=True,
            help="CSV or Parquet (.parquet): id, score_<model> and/or label_<model> per model, the --groups and "
            "--outcome-column columns, "
            "optionally x_<time> effort series and feature columns",
        )
        parser.add_argument(
            "--groups",
            nargs="+",
            metavar="COL",
            help="the sensitive columns the group metrics compare (never guessed; an effort file without it keeps "
            "its old default: every other column with at most 50 values)",
        )
        parser.add_argument("--outcome-column", metavar="COL", help="the truth (0/1): accuracy, TPR, FPR, FNR")
        parser.add_argument("--calibration", type=int, help="Calibration id (default: the latest Likert one)")
        parser.add_argument("--condition", help="study condition (default: the calibration's, else the first)")
        parser.add_argument("--shown-model", default=DEFAULTS.shown_model, help="model whose labels participants saw")
        parser.add_argument("--out", help="report directory (default REPORTS_DIR/<slug>/audit-<condition>)")
        for flag, default, text in (
            ("--seed", DEFAULTS.seed, "seed of every random draw of the audit (stored with the result)"),
            (
                "--resamples",
                DEFAULTS.n_resamples,
                "bootstrap resamples of every interval (the human metric refits at most 200 times)",
            ),
        ):
            parser.add_argument(flag, type=int, default=default, help=text)
        for option in OPTIONS.values():  # the sources of what people said, by the yield each needs
            parser.add_argument(option.flag, metavar="SLUG[:BLOCK]", help=option.help)
        parser.add_argument(
            "--lipschitz",
            type=float,
            default=DEFAULTS.lipschitz,
            metavar="L",
            help="with --metric-from: a pair violates when its scores differ by more than L times its human-metric "
            "distance (scores' units per unit of distance; default 1)",
        )
        parser.add_argument(
            "--surrogate",
            choices=list(SURROGATES),
            default=DEFAULTS.surrogate,
            help="with --features-from: the model fitted to each audited model's scores for its permutation "
            "importances: linear (least squares, in-sample R^2; the default) or forest (a random forest, which "
            "follows thresholds and interactions; out-of-bag R^2)",
        )
        parser.add_argument(
            "--engine",
            choices=["pandas", "dask"],
            default="pandas",
            help="pandas: read the subjects file on this machine (the default); dask: read a Parquet subjects file as "
            "a Dask DataFrame (only the audited columns leave the file), on --scheduler's cluster or a local one",
        )
        parser.add_argument(
            "--scheduler",
            metavar="ADDR",
            help="a running Dask cluster's scheduler, tcp://HOST:PORT (default DASK_SCHEDULER_ADDRESS, else a "
            "LocalCluster of this machine started and stopped by the audit)",
        )
        parser.add_argument(
            "--exact-eaif",
            action="store_true",
            help="compute every EaIF exactly on Dask at any number of subjects (default: exact up to 50,000 "
            "subjects, sampled with a distribution-free bound above)",
        )
        parser.add_argument(
            "--bound",
            choices=BOUNDS,
            default=DEFAULTS.bound,
            help="the interval of a sampled EaIF and violation share, at 95%%: bernstein (empirical Bernstein, the "
            "default) or hoeffding (both hold for every number of pairs with no assumption but terms in [0, 1]), or "
            "normal (the central limit theorem's approximation)",
        )
        parser.add_argument(
            "--n-pairs",
            type=int,
            default=DEFAULTS.n_pairs,
            metavar="M",
            help=f"uniform pairs drawn when EaIF is sampled (above 50,000 subjects without --exact-eaif; default "
            f"{DEFAULTS.n_pairs:,}; at least 1,000, at most {MAX_PAIRS:,}); with --half-width, the first check",
        )
        parser.add_argument(
            "--half-width",
            type=float,
            metavar="H",
            help="when EaIF is sampled: draw until the interval's half-width is at most H (checked at --n-pairs "
            f"times 2^j with a union bound, so the interval still holds at 95%%; at most {MAX_PAIRS:,} pairs; "
            "H from 5e-05 to below 0.5)",
        )
        parser.add_argument(
            "--by", nargs="+", default=[], metavar="QUESTION", help="rater groups of those studies (questionnaire)"
        )
        add_multiple_testing(parser)

    def handle(self, *args, study, subjects, condition, out, **options):
        out_dir = Path(out) if out else Path(settings.REPORTS_DIR) / study / f"audit-{condition or 'default'}"
        problems = sampling_problems(
            bound=options["bound"], n_pairs=options["n_pairs"], half_width=options["half_width"]
        )
        if problems:
            raise CommandError("; ".join(problem for found in problems.values() for problem in found))
        parameters = AuditParameters.from_request(
            {**options, "condition": condition, "n_resamples": options["resamples"]}
        )
        progress = StageProgress(  # a line when each stage starts and ends, and every 2 s while it runs
            report=lambda fraction, message: self.stdout.write(f"  [{fraction:4.0%}] {message}"),
            stages=STAGES,
            min_interval=2.0,
        )
        try:
            run = audit_run_create(
                slug=study, subjects_file=subjects, out_dir=out_dir, parameters=parameters, progress=progress
            )
        except (StudyNotFound, AuditError, SubjectsFileError, SourceError, SourceErrors) as exc:
            raise CommandError(str(exc)) from exc
        for row in run.results["group_metrics"]:
            if row["quantity"] in ("overall", "ratio") and row["metric"] in ("selection_rate", "false_positive_rate"):
                where = f" by {row['group_column']}" if row["group_column"] else ""
                value, low, high = (_number(row[k]) for k in ("value", "ci_low", "ci_high"))
                self.stdout.write(
                    f"  {row['model']:<22} {row['metric']} {row['quantity']}{where}: {value} [{low}, {high}]"
                )
        for row in run.results["eaif"]:
            sampled = (
                f" [{row['ci_low']:.4f}, {row['ci_high']:.4f}] ({row['n_pairs']:,} pairs, {row['bound']} bound)"
                if row.get("bound")
                else ""
            )
            self.stdout.write(f"  {row['model']:<22} {row['weights']:<22} EaIF {row['eaif']:.4f}{sampled}")
        cal = run.results.get("disagreement_calibration")
        if cal:
            self.stdout.write(
                f"  alpha from disagreement feedback: {cal['alpha']:.2f} [{cal['ci'][0]:.2f}, {cal['ci'][1]:.2f}] "
                f"({cal['estimand']})"
            )
            if cal.get("boundary_note"):
                self.stdout.write(f"  {cal['boundary_note']}")
        human = run.results.get("human") or {}
        for row in human.get("human_metric_lipschitz", []):
            self.stdout.write(
                f"  {row['model']:<22} human metric: share of pairs violating (L = {row['L']:g}) {row['statistic']:.4f}"
            )
        for row in human.get("utility_agreement", []):
            self.stdout.write(
                f"  {row['model']:<22} Spearman with the utility of {row['rater_group']}: {row['statistic']:.3f}"
            )
        for row in human.get("unfair_feature_reliance", []):
            self.stdout.write(
                f"  {row['model']:<22} reliance on features judged unfair ({row['rater_group']}): {row['reliance']:.4f}"
            )
        for row in human.get("tradeoff_scores", []):
            self.stdout.write(
                f"  {row['model']:<22} trade-off score of {row['rater_group']}: {row['score']:.3f}; minus "
                f"{row['reference']}'s: {row['difference']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
            )
        self.stdout.write(self.style.SUCCESS(f"report: {out_dir / 'report.html'}"))
        self.stdout.write(f"on the dashboard: {report_address('researcher:audit-file', run.pk)}")


def _number(value) -> str:
    """A rate of results.json (null: undefined) as printed."""
    return "undefined" if value is None else f"{value:.3f}"
