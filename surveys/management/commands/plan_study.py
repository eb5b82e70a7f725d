from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis.planning import plan_study
from surveys.management.commands._progress import ProgressBar
from surveys.simulation import GenerativeModel
from surveys.study_file import InvalidStudyFile, read_study_file

DEMO_FILE = Path(settings.BASE_DIR) / "surveys" / "studies" / "effort_demo.json"


class Command(BaseCommand):
    help = "Simulate studies of a given size: expected CI width of alpha and power of the Steiger test."

    def add_arguments(self, parser):
        parser.add_argument("--n", type=int, default=150, help="participants per study")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--studies", type=int, default=100, help="simulated studies")
        parser.add_argument("--study-file", default=str(DEMO_FILE))
        parser.add_argument("--a1", type=float, default=GenerativeModel.a1)
        parser.add_argument("--a2", type=float, default=GenerativeModel.a2)
        parser.add_argument("--noise", type=float, default=GenerativeModel.overall_noise)

    def handle(self, *args, n, seed, studies, study_file, a1, a2, noise, **options):
        if n < 4 or studies < 1:
            raise CommandError("--n must be >= 4 and --studies >= 1")
        try:
            spec = read_study_file(study_file)
        except InvalidStudyFile as exc:
            raise CommandError(str(exc)) from exc
        result = plan_study(
            spec,
            n=n,
            n_studies=studies,
            seed=seed,
            model=GenerativeModel(a1=a1, a2=a2, overall_noise=noise),
            progress=ProgressBar(studies, "studies", self.stderr),
        )
        self.stdout.write(
            f"{studies} simulated studies of {n} participants (seed {seed}); true alpha {result.true_alpha:.4f}"
        )
        self.stdout.write(result.table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
