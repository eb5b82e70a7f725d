from pathlib import Path

from django.core.management.base import BaseCommand

from core import strict_json
from studies.demo_study import build_demo_study
from studies.study_file import validate_study


class Command(BaseCommand):
    help = "Write the demo study file (synthetic subjects, seeded) to --out."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=2025, help="seed of the demo study's synthetic subjects")
        parser.add_argument("--out", default="studies/bundled/effort_demo.json", help="the study file to write")

    def handle(self, *args, seed: int, out: str, **options):
        spec = build_demo_study(seed)
        validate_study(spec)
        Path(out).write_text(strict_json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        self.stdout.write(self.style.SUCCESS(f"wrote {out} (seed {seed})"))
