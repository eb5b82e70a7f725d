"""A study's bonus paid through Prolific's API exactly once (``prolific_pay_bonuses``).

The winners of ``export_bonuses`` (``research.bonuses.bonus_table``) are set up as one bulk bonus
(``POST /submissions/bonus-payments/``: Prolific quotes the total with fees, nothing is paid) and stored as
``prepared``. Paying stores ``paying`` first, in its own transaction, and only then calls
``POST /bulk-bonus-payments/{id}/pay/``, which is not idempotent; ``paid`` follows Prolific's answer. A bonus
that is ``paying`` or ``paid`` is never sent to ``/pay/`` again, whatever happens between the two steps: a
crash there leaves ``paying`` for the researcher to check on Prolific.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from analysis.bts import bulk_bonus_csv
from research.bonuses import bonus_table
from research.models import ProlificBonus, ProlificStudy
from research.prolific_client import ProlificClient, ProlificError


class AlreadyPaid(ValueError):
    """The study's bonus of this kind is ``paying`` or ``paid``: it is never paid again."""


@dataclass(frozen=True)
class BonusQuote:
    """The bulk bonus as Prolific set it up: ``lines`` (participant id, amount), Prolific's totals."""

    kind: str
    lines: list[tuple[str, str]]
    amount: Decimal
    fees: Decimal
    total: Decimal
    state: str


def _money(value: float) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


def _quote(bonus: ProlificBonus) -> BonusQuote:
    lines = [(participant, amount) for participant, amount in (row.split(",", 1) for row in bonus.csv_bonuses.split())]
    return BonusQuote(bonus.kind, lines, bonus.amount, bonus.fees, bonus.total, bonus.state)


def _refuse_if_paid(bonus: ProlificBonus | None) -> None:
    if bonus is not None and bonus.state != ProlificBonus.State.PREPARED:
        when = f" on {bonus.paid_at:%Y-%m-%d %H:%M} UTC" if bonus.paid_at else ""
        raise AlreadyPaid(
            f"the {bonus.kind} bonus of {bonus.slug} is {bonus.state}{when} (bulk {bonus.bulk_id}): it is never paid "
            "again"
            + (
                "; a run stopped after storing 'paying': check the payment on Prolific"
                if bonus.state == "paying"
                else ""
            )
        )


def prolific_bonus_prepare(*, slug: str, kind: str, amount: float | None, client: ProlificClient) -> BonusQuote:
    """Set up the study's ``kind`` bonus on Prolific and store it as ``prepared`` (nothing paid); a prepared bonus
    with the same lines is reused, one with other lines replaced. Raises ``AlreadyPaid`` once it is paying or paid."""
    record = ProlificStudy.objects.filter(slug=slug).first()
    if record is None:
        raise ValueError(f"{slug!r} is not on Prolific yet: run prolific_publish first")
    _refuse_if_paid(ProlificBonus.objects.filter(slug=slug, kind=kind).first())
    csv_bonuses = bulk_bonus_csv(bonus_table(slug, kind, amount=amount))
    existing = ProlificBonus.objects.filter(slug=slug, kind=kind).first()
    if existing is not None and existing.csv_bonuses == csv_bonuses:
        return _quote(existing)
    quoted = client.set_up_bonus(record.prolific_id, csv_bonuses.strip())
    with transaction.atomic():
        current = ProlificBonus.objects.select_for_update().filter(slug=slug, kind=kind).first()
        _refuse_if_paid(current)
        fields = {
            "bulk_id": quoted.bulk_id,
            "csv_bonuses": csv_bonuses,
            "recipients": len(csv_bonuses.splitlines()),
            "amount": _money(quoted.amount),
            "fees": _money(quoted.fees),
            "total": _money(quoted.total),
        }
        bonus, _ = ProlificBonus.objects.update_or_create(slug=slug, kind=kind, defaults=fields)
    return _quote(bonus)


def prolific_bonus_pay(*, slug: str, kind: str, client: ProlificClient) -> BonusQuote:
    """Pay the prepared bonus: ``paying`` is committed before ``/pay/`` is called, ``paid`` after Prolific's
    answer. A refusal from Prolific (an answer 4xx) puts it back to ``prepared``; no answer leaves ``paying``."""
    with transaction.atomic():
        bonus = ProlificBonus.objects.select_for_update().filter(slug=slug, kind=kind).first()
        if bonus is None:
            raise ValueError(f"no prepared {kind} bonus for {slug!r}: prepare it first (--dry-run)")
        _refuse_if_paid(bonus)
        bonus.state = ProlificBonus.State.PAYING
        bonus.save(update_fields=["state"])
    try:
        client.pay_bonus(bonus.bulk_id)
    except ProlificError as exc:
        if exc.status is not None and exc.status < 500:
            ProlificBonus.objects.filter(pk=bonus.pk).update(state=ProlificBonus.State.PREPARED)
        raise
    bonus.state, bonus.paid_at = ProlificBonus.State.PAID, timezone.now()
    bonus.save(update_fields=["state", "paid_at"])
    return _quote(bonus)
