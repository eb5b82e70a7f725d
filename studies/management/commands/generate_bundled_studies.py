from pathlib import Path

from django.core.management.base import BaseCommand

from studies.study_file import read_study_text
from studies.synthetic_defendants import bundled_studies


class Command(BaseCommand):
    help = (
        "Rewrite the synthetic bundled studies (studies/synthetic_defendants.py, seeded): "
        "synthetic_defendants.csv, disagreement_synthetic.json, rating_synthetic.json."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out-dir", default="studies/bundled", help="folder to write the bundled study files into")

    def handle(self, *args, out_dir: str, **options):
        for name, raw in bundled_studies().items():
            if name.endswith(".json"):
                read_study_text(raw.decode("utf-8"))  # refuse to write an invalid study file
            (Path(out_dir) / name).write_bytes(raw)
            self.stdout.write(self.style.SUCCESS(f"wrote {Path(out_dir) / name}"))
