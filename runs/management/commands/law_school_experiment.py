from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from fairness import law_school
from runs.provenance import Provenance
from runs.reports.situation_testing import write_law_school_report

DEFAULT = (
    Path(settings.BASE_DIR).parent
    / "shared"
    / "reference-data"
    / "counterfactual_situation_testing"
    / "clean_LawSchool.csv"
)


class Command(BaseCommand):
    help = "Run the CST paper's law-school experiment (gender, race, multiple, intersectional) and write a report."

    def add_arguments(self, parser):
        parser.add_argument("--data", default=str(DEFAULT), help="clean_LawSchool.csv ('|'-separated)")
        parser.add_argument(
            "--k", nargs="+", type=int, default=list(law_school.K_LIST), help="the numbers of neighbours k to test with"
        )
        parser.add_argument(
            "--out",
            default=str(Path(settings.REPORTS_DIR) / "law-school"),
            help="folder to write the counts and the report into",
        )
        parser.add_argument(
            "--mode",
            choices=law_school.MODES,
            default="paper",
            help="paper: the paper's equations and our SCM (default); reference: the authors' code and "
            "counterfactual files (cf_LawSchool_lev3_do*.csv beside --data), reproducing Tables 10-13",
        )

    def handle(self, *args, data, k, out, mode, **options):
        try:
            results = law_school.run(data, k=k, mode=mode)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        for name in ("gender", "race", "intersectional"):
            self.stdout.write(f"{name}:\n{getattr(results, name).counts.to_string(index=False)}")
        self.stdout.write(
            f"multiple (Bonferroni alpha/2, flagged for both):\n{results.multiple.to_string(index=False)}"
        )
        provenance = Provenance(
            settings={"Data": f"{data} ({len(results.data)} applicants)", "k": " ".join(map(str, k))}
        )
        path = write_law_school_report(results, results.data, Path(out), k=k, provenance=provenance)
        self.stdout.write(self.style.SUCCESS(f"report: {path}"))
