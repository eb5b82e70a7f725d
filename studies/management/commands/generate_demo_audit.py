import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from studies.demo_audit import demo_subjects_table

DEMO_FILE = Path(settings.BASE_DIR) / "studies" / "bundled" / "effort_demo.json"


class Command(BaseCommand):
    help = "Write the demo audit's subjects CSV (three scikit-learn models on synthetic subjects)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--condition", default="arrests", help="the demo study's condition whose effort feature the subjects have"
        )
        parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic subjects and models")
        parser.add_argument("--out", help="CSV path (default REPORTS_DIR/demo-subjects-<condition>.csv)")

    def handle(self, *args, condition, seed, out, **options):
        spec = json.loads(DEMO_FILE.read_text())
        path = Path(out) if out else Path(settings.REPORTS_DIR) / f"demo-subjects-{condition}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        demo_subjects_table(spec, condition, seed=seed).to_csv(path, index=False)
        self.stdout.write(self.style.SUCCESS(f"wrote {path}"))
