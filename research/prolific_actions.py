"""The Prolific actions a researcher starts from the dashboard or the API (run by ``prolific_action_task`` in
the job worker), and the sentences the commands and the panel use to say what each did."""

from research.prolific_bonuses import BonusQuote, prolific_bonus_pay, prolific_bonus_prepare
from research.prolific_client import ProlificClient
from research.prolific_review import Reviewed, prolific_reject, prolific_review
from research.prolific_services import Published, prolific_publish, prolific_sync


def published_sentence(slug: str, result: Published) -> str:
    if not result.created and not result.published:
        return f"{slug} is already on Prolific as {result.prolific_id} ({result.status}): nothing changed"
    made = f"created Prolific study {result.prolific_id}" if result.created else f"Prolific study {result.prolific_id}"
    return f"{made}, {'published' if result.published else 'left as a draft'} ({result.status})"


def reviewed_sentence(result: Reviewed, *, dry_run: bool) -> str:
    verb = "would approve" if dry_run else "approved"
    return (
        f"{verb} {len(result.approved)}; {len(result.flagged)} left for you to decide (never rejected "
        f"automatically); {len(result.unmatched)} awaiting review with no participant here"
    )


def quote_sentence(quote: BonusQuote) -> str:
    return (
        f"{quote.kind} bonus ({quote.state}): {len(quote.lines)} participants, {quote.amount} in bonuses, "
        f"Prolific's total with fees {quote.total} (fees {quote.fees})"
    )


def run_action(slug: str, action: str, options: dict, client: ProlificClient) -> str:
    """Run ``action`` (``research.prolific_tasks.ACTIONS``) on the study and say what it did."""
    if action == "publish":
        return published_sentence(slug, prolific_publish(slug=slug, client=client, **options))
    if action == "sync":
        synced = prolific_sync(slug=slug, client=client)
        return f"synced {synced.submissions} submissions ({synced.changed} changed)"
    if action == "review":
        return reviewed_sentence(prolific_review(slug=slug, client=client), dry_run=False)
    if action == "bonus_dry_run":
        return "dry run: " + quote_sentence(prolific_bonus_prepare(slug=slug, client=client, **options))
    if action == "bonus_pay":
        return "paid: " + quote_sentence(prolific_bonus_pay(slug=slug, client=client, **options))
    if action == "reject":
        return f"submission {options['submission_id']}: " + prolific_reject(slug=slug, client=client, **options)
    raise ValueError(f"unknown Prolific action {action!r}")
