from django.core.management.base import BaseCommand, CommandError

from research.prolific_actions import reviewed_sentence
from research.prolific_client import REJECTION_CATEGORIES, ProlificClient, ProlificError
from research.prolific_review import prolific_reject, prolific_review


class Command(BaseCommand):
    help = (
        "Approve on Prolific every submission awaiting review whose participant completed and is not excluded; "
        "list the others with their evidence (never rejected automatically). --reject rejects one submission, "
        "with Prolific's message and category."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study published with prolific_publish")
        parser.add_argument("--dry-run", action="store_true", help="say what would be approved, approve nothing")
        parser.add_argument("--reject", metavar="SUBMISSION_ID", help="reject this submission (cannot be undone)")
        parser.add_argument(
            "--message", default="", help="with --reject: the message to the participant (100+ characters)"
        )
        parser.add_argument(
            "--category", choices=REJECTION_CATEGORIES, help="with --reject: Prolific's rejection category"
        )

    def handle(self, *args, slug, dry_run, reject, message, category, **options):
        try:
            client = ProlificClient()
            if reject:
                status = prolific_reject(
                    slug=slug, submission_id=reject, message=message, category=category or "", client=client
                )
                self.stdout.write(f"submission {reject}: {status}")
                return
            result = prolific_review(slug=slug, client=client, dry_run=dry_run)
        except (ProlificError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        for submission_id in result.approved:
            self.stdout.write(f"{'would approve' if dry_run else 'approved'} {submission_id}")
        for flagged in result.flagged:
            self.stdout.write(
                f"for you to decide: {flagged.submission_id} ({flagged.participant_id}): {flagged.evidence}"
            )
        self.stdout.write(reviewed_sentence(result, dry_run=dry_run))
