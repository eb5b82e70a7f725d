from django.core.management.base import BaseCommand, CommandError

from research.bonuses import KINDS
from research.prolific_actions import quote_sentence
from research.prolific_bonuses import prolific_bonus_pay, prolific_bonus_prepare
from research.prolific_client import ProlificClient, ProlificError
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = (
        "Pay the honesty or rationale bonus (the winners of export_bonuses) through Prolific as one bulk bonus, "
        "exactly once: the bulk id and the state 'paying' are stored before Prolific's /pay/ is called, and no "
        "later run calls it again for the same bonus."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study published with prolific_publish")
        parser.add_argument("--kind", choices=KINDS, required=True, help="honesty (BTS scores) or rationale")
        parser.add_argument("--amount", type=float, help="the bonus per winner (default: the study file's amount)")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the list, the total and Prolific's total with fees; pay nothing",
        )

    def handle(self, *args, slug, kind, amount, dry_run, **options):
        try:
            client = ProlificClient()
            quote = prolific_bonus_prepare(slug=slug, kind=kind, amount=amount, client=client)
            if dry_run:
                for participant, bonus in quote.lines:
                    self.stdout.write(f"{participant},{bonus}")
                self.stdout.write(f"dry run, nothing paid: {quote_sentence(quote)}")
                return
            quote = prolific_bonus_pay(slug=slug, kind=kind, client=client)
        except (StudyNotFound, ProlificError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"paid: {quote_sentence(quote)}"))
