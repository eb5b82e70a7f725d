"""Approvals on Prolific (``prolific_review``): every submission awaiting review whose participant completed the
study and is not excluded is approved; nothing is rejected automatically. A submission awaiting review whose
participant is excluded, or whose outcome the platform would reject (failed attention checks), goes to a list
for the researcher with its evidence; a rejection is the researcher's, with Prolific's message and category
(:func:`prolific_reject`)."""

from dataclasses import dataclass, field

from participation.outcomes import review
from research.export import export_tables
from research.models import ProlificSubmission
from research.prolific_client import ProlificClient, check_rejection
from research.prolific_services import awaiting_review, prolific_record_submission, prolific_sync


@dataclass(frozen=True)
class Flagged:
    """A submission left to the researcher and why."""

    submission_id: str
    participant_id: str  # Prolific's participant id
    evidence: str


@dataclass
class Reviewed:
    approved: list[str] = field(default_factory=list)
    flagged: list[Flagged] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # awaiting review, no participant here


def _evidence(person: dict) -> str:
    parts = [
        f"attention checks failed {person['attention_failed']} of "
        f"{person['attention_failed'] + person['attention_passed']}"
    ]
    if person["excluded"]:
        parts.insert(0, "excluded")
    if person["quality_flags"]:
        parts.append(f"quality flags: {person['quality_flags'].replace(';', ', ')}")
    return "; ".join(parts)


def prolific_review(*, slug: str, client: ProlificClient, dry_run: bool = False) -> Reviewed:
    """Reconcile the submissions first (``prolific_sync``), then approve those awaiting review whose participant
    completed and is not excluded (``dry_run``: only say which)."""
    prolific_sync(slug=slug, client=client)
    people = export_tables(slug).participants.set_index("participant_id").to_dict("index")
    rows = ProlificSubmission.objects.filter(awaiting_review(slug)).select_related("participant__study")
    result = Reviewed()
    for row in rows.order_by("pk"):
        p = row.participant
        if p is None:
            result.unmatched.append(row.submission_id)
            continue
        person = people[str(p.pseudonym)]
        decision = review(p.study.spec, p.status, int(person["attention_failed"]), 0)
        if decision is None or decision.action != "approve" or person["excluded"]:
            flagged = Flagged(row.submission_id, p.external_id, _evidence(person))
            result.flagged.append(flagged)
            if not dry_run:
                ProlificSubmission.objects.filter(pk=row.pk).update(evidence=flagged.evidence)
            continue
        if not dry_run:
            prolific_record_submission(record=row.prolific_study, submission=client.approve(row.submission_id))
        result.approved.append(row.submission_id)
    return result


def prolific_reject(*, slug: str, submission_id: str, message: str, category: str, client: ProlificClient) -> str:
    """Reject one submission of the study for good, with Prolific's message (100 characters or more) and
    category; refused before any call to Prolific without them. Returns Prolific's new status."""
    check_rejection(message, category)
    row = ProlificSubmission.objects.filter(prolific_study__slug=slug, submission_id=submission_id).first()
    if row is None:
        raise ValueError(f"no Prolific submission {submission_id!r} in {slug!r} (run prolific_sync)")
    answer = client.reject(submission_id, message=message, category=category)
    prolific_record_submission(record=row.prolific_study, submission=answer)
    return answer["status"]
