from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from fairness import law_school
from fairness.html_report import table, write_page
from fairness.relative_reports import counts_figure, flagged_table

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
        parser.add_argument("--k", nargs="+", type=int, default=list(law_school.K_LIST))
        parser.add_argument("--out", default=str(Path(settings.REPORTS_DIR) / "law-school"))

    def handle(self, *args, data, k, out, **options):
        try:
            results = law_school.run(data, k=k)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        frame = law_school.load(data)
        parts = [
            f"<p>Protected individuals: {results.n_protected}. Decision: admitted when 0.6 UGPA + 0.4 LSAT >= "
            f"{law_school.MIN_SCORE}. Counterfactuals: linear SCM {law_school.DAG}.</p>"
        ]
        for name in ("gender", "race", "intersectional"):
            res = getattr(results, name)
            res.counts.to_csv(out_dir / f"counts_{name}.csv", index=False)
            self.stdout.write(f"{name}:\n{res.counts.to_string(index=False)}")
            fig = counts_figure(res)
            fig.update_layout(title=f"{name}: complainants flagged per k")
            parts += [
                f"<h2>{name}</h2>",
                table(res.counts),
                fig.to_html(full_html=False, include_plotlyjs="directory" if name == "gender" else False),
                "<h3>Flagged by CST without centres (smallest k)</h3>",
                flagged_table(res, k=min(k), method="CSTwo", data=frame, limit=50),
            ]
        results.multiple.to_csv(out_dir / "counts_multiple.csv", index=False)
        self.stdout.write(
            f"multiple (Bonferroni alpha/2, flagged for both):\n{results.multiple.to_string(index=False)}"
        )
        parts += ["<h2>Multiple discrimination (gender and race, each at alpha / 2)</h2>", table(results.multiple)]
        path = write_page(out_dir, "Counterfactual situation testing: LSAC law-school data", parts)
        self.stdout.write(self.style.SUCCESS(f"report: {path}"))
