import argparse
import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.progress import ProgressBar
from runs.design_check import DEFAULT_REPLICATIONS, DesignCheck, check_design, planned_participants
from runs.plan_parameters import PLAN_PARAMETERS, PlanParameter, plan_total
from runs.planning_runs import plan_results, run_plan, size_overview
from simulation.effort_design import effort_conditions
from studies.services import stored_file
from studies.study_file import InvalidStudyFile, read_study_file

DEMO_FILE = Path(settings.BASE_DIR) / "studies" / "bundled" / "effort_demo.json"


def bounded(name: str, parameter: PlanParameter):
    """argparse type: a number (an integer where required) within the parameter's range."""
    option = f"--{name.replace('_', '-')}"
    kind = "an integer" if parameter.integer else "a number"

    def parse(text: str):
        try:
            value = int(text) if parameter.integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} must be {kind}, got {text!r}") from None
        if not parameter.low <= value <= parameter.high:  # also refuses NaN
            raise argparse.ArgumentTypeError(
                f"{option} must be {kind} from {parameter.low:g} to {parameter.high:g}, got {text}"
            )
        return value

    return parse


class Command(BaseCommand):
    help = (
        "The design check of a study file: simulate the study as built (every block's task type and assignment, "
        "the planned participants, the rater groups of --by) and report whether each block's estimates are "
        "identified overall and per rater group and how wide their intervals are. A file with an effort design "
        "also gets the effort plan: alpha's estimand and bias, CI widths and coverage (clustered, plain, two-way "
        "bootstrap) and power, each share with its Monte Carlo SE; and how more stimulus pairs narrow the "
        "generalising CI."
    )

    def add_arguments(self, parser):
        for name, parameter in PLAN_PARAMETERS.items():
            parser.add_argument(
                f"--{name.replace('_', '-')}",
                dest=name,
                type=bounded(name, parameter),
                default=parameter.default,
                help=f"{parameter.help} ({parameter.low:g} to {parameter.high:g}; default {parameter.default:g})",
            )
        parser.add_argument(
            "--study-file",
            default=str(DEMO_FILE),
            help="plan the design of this study file (default: the effort demo's)",
        )
        parser.add_argument(
            "--by",
            action="append",
            default=[],
            metavar="QUESTION",
            help="the design check's rater groups: split by this single-choice questionnaire question (repeat to "
            "combine; default: one group). Planned participants: the file's recruitment.target, else --n",
        )
        parser.add_argument(
            "--replications",
            type=int,
            default=DEFAULT_REPLICATIONS,
            help=f"simulated runs of the study in the design check (default {DEFAULT_REPLICATIONS})",
        )
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="print the design check (and the effort plan) as JSON"
        )

    def handle(self, *args, study_file, by, replications, as_json: bool = False, **options):
        params = {}
        for name, parameter in PLAN_PARAMETERS.items():  # call_command passes keywords unconverted
            try:
                params[name] = bounded(name, parameter)(str(options[name]))
            except argparse.ArgumentTypeError as exc:
                raise CommandError(str(exc)) from None
        try:
            spec, _ = stored_file(read_study_file(study_file))  # a format 1 file as its conversion
        except InvalidStudyFile as exc:
            raise CommandError(str(exc)) from exc
        if replications < 1:
            raise CommandError(f"--replications must be at least 1, got {replications}")
        n = planned_participants(spec, params["n"])
        try:
            check = check_design(
                spec,
                participants=n,
                by=by,
                replications=replications,
                seed=params["seed"],
                progress=ProgressBar(replications, "design check runs", self.stderr),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        try:
            effort_conditions(spec)
        except ValueError:  # no effort design: the design check is the plan
            self._design_check(check, as_json=as_json)
            return
        try:
            result = run_plan(spec, params, progress=ProgressBar(plan_total(params), "studies", self.stderr))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if as_json:
            self._design_check(check, as_json=True, effort=plan_results(result))
            return
        self._design_check(check, as_json=False)
        self.stdout.write(
            f"{params['studies']} simulated studies of {params['n']} participants (seed {params['seed']}); "
            f"generating alpha {result.true_alpha:.4f} (the estimator's target: estimand; bias = estimand - "
            "generating); coverage against the estimand (coverage_generating: against the generating alpha); "
            "Monte Carlo SE of each share in *_mcse"
        )
        self.stdout.write(result.table.set_index("condition").T.to_string(float_format=lambda v: f"{v:.4f}"))
        self.stdout.write(
            "alpha's spread with more stimulus pairs (projection, each participant rating 12; ci_width: that of a "
            "calibrated generalising 95% CI):"
        )
        self.stdout.write(result.stimuli.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        if len(result.sizes):
            self.stdout.write(
                f"size of the headline tests at 5% against the population's value, {params['size_studies']} "
                "studies per stimulus SD (Monte Carlo SE sqrt(p (1 - p) / R) in results.json / sizes.csv):"
            )
            self.stdout.write(size_overview(result.sizes).to_string(float_format=lambda v: f"{v:.3f}"))

    def _design_check(self, check: DesignCheck, *, as_json: bool, effort: dict | None = None) -> None:
        if as_json:
            self.stdout.write(json.dumps({"design_check": check.as_dict(), "effort_plan": effort}, indent=2))
            return
        self.stdout.write(check.summary())
