from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import ProgressBar
from participation.simulate import simulate_participants
from simulation.effort import GenerativeModel
from simulation.raters import GroupEffects, parse_group_effect
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = "Create simulated participants who take the study through the same services as a browser."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the study to simulate participants of")
        parser.add_argument("--n", type=int, default=150, help="number of simulated participants")
        parser.add_argument("--seed", type=int, default=1, help="seed of the simulated raters (stored with them)")
        parser.add_argument("--a1", type=float, default=GenerativeModel.a1, help="weight of aggregate distance")
        parser.add_argument("--a2", type=float, default=GenerativeModel.a2, help="weight of trajectory distance")
        parser.add_argument(
            "--noise", type=float, default=GenerativeModel.overall_noise, help="sd of the overall rating"
        )
        parser.add_argument("--hours", type=float, default=6.0, help="arrivals spread over the past HOURS")
        parser.add_argument(
            "--pilot",
            action="store_true",
            help="arrive by the researcher's pilot link (a draft, pilot or live study admits them; pilots are left out "
            "of the exports and analyses)",
        )
        parser.add_argument(
            "--group-effect",
            action="append",
            default=[],
            metavar="QUESTION=OPTION:FIELD=VALUE[,FIELD=VALUE]",
            help="format 2: the effect of a questionnaire answer on raters (fields leniency, scale_shift, noise, "
            "alpha, honesty, prediction_bias); repeatable; default: the first single-choice question's first "
            "option is 1 logit more lenient and rates 1 scale point lower",
        )

    def handle(
        self,
        *args: object,
        slug: str,
        n: int,
        seed: int,
        a1: float,
        a2: float,
        noise: float,
        hours: float,
        group_effect: list[str],
        pilot: bool,
        **options: object,
    ) -> None:
        if n < 1:
            raise CommandError("--n must be at least 1")
        model = GenerativeModel(a1=a1, a2=a2, overall_noise=noise)
        effects: GroupEffects = {}
        try:
            for text in group_effect:
                question, option, values = parse_group_effect(text)
                effects.setdefault(question, {}).setdefault(option, {}).update(values)
            report = simulate_participants(
                slug,
                n=n,
                seed=seed,
                model=model,
                hours=hours,
                group_effects=effects or None,
                progress=ProgressBar(n, "participants", self.stderr),
                pilot=pilot,
            )
        except (StudyNotFound, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.completed} of {report.created} simulated {'pilot ' if pilot else ''}participants "
                f"completed (seed {seed}); "
                f"by condition: {report.by_condition}" + (f"; stopped: {report.stopped}" if report.stopped else "")
            )
        )
