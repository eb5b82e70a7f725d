from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.bts import MIN_RESPONDENTS, bulk_bonus_csv, left_out_sentence
from core.cli_args import checked
from core.cli_args import top_fraction as fraction_type
from research.bonuses import KINDS, bonus_table
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = "Write the honesty (BTS) or rationale bonus list in Prolific's bulk-bonus format (raw Prolific ids)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study whose bonuses to compute")
        parser.add_argument(
            "--kind",
            choices=KINDS,
            default="honesty",
            help="honesty (Bayesian Truth Serum scores) or rationale (the written rationales)",
        )
        parser.add_argument("--out", help="file to write (default: print)")
        parser.add_argument(
            "--amount", type=float, help="the bonus per participant paid (default: the study file's bonus amount)"
        )
        parser.add_argument("--top-fraction", type=fraction_type, help="share of eligible participants paid, in (0, 1]")
        parser.add_argument(
            "--min-respondents",
            type=int,
            help=f"honesty: fewest respondents a question needs to count (default: the study's, or {MIN_RESPONDENTS})",
        )

    def handle(self, *args, slug, kind, out, amount, top_fraction, min_respondents, **options):
        if top_fraction is not None:
            top_fraction = checked(top_fraction, fraction_type)
        try:
            table = bonus_table(slug, kind, amount=amount, top_fraction=top_fraction, min_respondents=min_respondents)
        except (StudyNotFound, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        text = bulk_bonus_csv(table)
        # notes on stderr, so that the printed list stays a clean CSV
        if left_out := left_out_sentence(table):
            self.stderr.write(self.style.WARNING(f"Note: {left_out}."))
        if table.attrs.get("tie_warning"):
            self.stderr.write(self.style.WARNING(f"Warning: {table.attrs['tie_warning']}."))
        if out:
            Path(out).write_text(text)
            self.stdout.write(self.style.SUCCESS(f"{len(table)} {kind} bonuses written to {out}"))
        else:
            self.stdout.write(text, ending="")
