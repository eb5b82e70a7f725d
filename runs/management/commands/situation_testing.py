import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.cli_args import add_multiple_testing, checked, significance_level
from core.uploads import UploadError, read_csv_upload
from fairness.counterfactual import DAGError, fit_linear_scm
from fairness.situation_testing import SituationTestingError
from research.params import typed_value
from runs.provenance import Provenance, settings_text
from runs.reports.situation_testing import write_st_report
from runs.situation_runs import ENGINES, situation_testing_run

OMITTED = (
    "none (--dag/--do: the SCM gives counterfactual features, not the model's decision on them): "
    "CF and CST with the complainant (CSTwi) omitted"
)


class Command(BaseCommand):
    help = (
        "Situation testing (ST), counterfactual situation testing (CST) and counterfactual fairness (CF) on a "
        "CSV; counterfactuals from a file or from a linear SCM on a DAG."
    )

    def add_arguments(self, parser):
        parser.add_argument("data", help="CSV of individuals (features, protected attribute, decision)")
        parser.add_argument("--sep", default=",", help='column separator: one character, e.g. "," ";" "|" or "\\t"')
        parser.add_argument("--protected", required=True, help="the column of the protected attribute")
        parser.add_argument("--protected-value", required=True, help="value of the protected group (JSON or text)")
        parser.add_argument("--target", required=True, help="decision column")
        parser.add_argument("--negative", required=True, help="the negative decision value (JSON or text)")
        parser.add_argument("--features", nargs="+", help="features for the distance (default: all other columns)")
        parser.add_argument(
            "--k", nargs="+", type=int, default=[15, 30, 50, 100, 250], help="the numbers of neighbours k to test with"
        )
        parser.add_argument("--alpha", type=significance_level, default=0.05, help="significance level in (0, 1)")
        parser.add_argument(
            "--tau",
            type=float,
            default=0.0,
            help="threshold on delta_p = p_c - p_t, the control minus test neighbours' share of negative outcomes",
        )
        parser.add_argument("--positive", action="store_true", help="test positive discrimination")
        parser.add_argument(
            "--mode",
            choices=["paper", "reference"],
            default="paper",
            help="paper (as the paper computed it) or reference (the reference implementation's conventions)",
        )
        parser.add_argument("--counterfactuals", help="CSV of counterfactual rows (same order), with the decision")
        parser.add_argument("--dag", help='JSON file {"node": ["parent", ...]} to fit a linear SCM')
        parser.add_argument(
            "--do",
            nargs="+",
            help="interventions col=value for the SCM (a number for a numeric column). The SCM cannot "
            "recompute the decision, so CF and CST with the complainant (CSTwi) are omitted; give "
            "--counterfactuals with the model's counterfactual decisions to get them",
        )
        add_multiple_testing(parser)
        parser.add_argument(
            "--engine",
            choices=ENGINES,
            default="local",
            help="local: the neighbour searches on this machine (the default); dask: on --scheduler's cluster or a "
            "local one, the complainants partitioned into tasks and the search spaces broadcast (the same results)",
        )
        parser.add_argument(
            "--scheduler",
            metavar="ADDR",
            help="with --engine dask: a running Dask cluster's scheduler, tcp://HOST:PORT (default "
            "DASK_SCHEDULER_ADDRESS, else a LocalCluster of this machine started and stopped by the run)",
        )
        parser.add_argument("--out", required=True, help="folder to write the results and the report into")

    def handle(self, *args, **o):
        o["alpha"] = checked(o["alpha"], significance_level)
        try:
            data = read_csv_upload(o["data"], name=o["data"], sep=o["sep"])
        except UploadError as exc:
            raise CommandError(str(exc)) from exc
        cf = None
        try:
            if o["counterfactuals"]:
                cf = read_csv_upload(o["counterfactuals"], name=o["counterfactuals"], sep=o["sep"])
            elif o["dag"]:
                dag = json.loads(Path(o["dag"]).read_text())
                bad = [item for item in o["do"] or [] if "=" not in item]
                if bad:
                    raise CommandError(f"--do takes col=value, not {bad}")
                interventions = dict(item.split("=", 1) for item in (o["do"] or []))
                if not interventions:
                    raise CommandError(
                        "--dag needs --do col=value (the non-protected value of the protected attribute)"
                    )
                nodes = set(dag) | {p for parents in dag.values() for p in parents}
                if o["target"] in nodes:
                    raise CommandError(
                        f"the decision {o['target']!r} cannot be a node of the linear SCM (its counterfactual "
                        "would not be a decision); give --counterfactuals with the model's counterfactual decisions"
                    )
                cf = fit_linear_scm(data, dag).counterfactuals(
                    data, {k: typed_value(v) for k, v in interventions.items()}
                )
                cf = cf.drop(columns=[o["target"]])
                o["counterfactual_outcomes"] = False
            result = situation_testing_run(data, cf, o)
        except (SituationTestingError, DAGError, json.JSONDecodeError, ValueError, RecursionError) as exc:
            raise CommandError(str(exc)) from exc
        settings = {
            k: o[k]
            for k in (
                "data",
                "protected",
                "protected_value",
                "target",
                "negative",
                "k",
                "alpha",
                "tau",
                "mode",
                "counterfactuals",
                "dag",
                "do",
                "multiple_testing",
            )
        }
        if o.get("counterfactual_outcomes") is False:
            settings["counterfactual decisions"] = OMITTED
            self.stdout.write(self.style.WARNING(OMITTED))
        provenance = Provenance(settings={"Individuals": str(len(data)), **settings_text(settings)})
        path = write_st_report(
            result, data, Path(o["out"]), title="Situation testing", settings=settings, provenance=provenance
        )
        self.stdout.write(result.counts.to_string(index=False))
        self.stdout.write(self.style.SUCCESS(f"report: {path}"))
