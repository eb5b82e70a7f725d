"""Simultaneous arrivals and double submissions against the real database (threads, one connection each)."""

import threading

import pytest
from django.db import connection

from participation.enrolment import enrolment_of
from participation.models import Answer, PageVisit, Participant
from participation.services import SubmitOutcome, page_submit, participant_arrive, participant_consent
from tests.surveys.helpers import answer_pages, answers_for, consented

pytestmark = pytest.mark.django_db(transaction=True)


def run_together(functions):
    barrier = threading.Barrier(len(functions))
    results, errors = [None] * len(functions), []

    def worker(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, fn)) for i, fn in enumerate(functions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_simultaneous_arrivals_stay_balanced(demo_study):
    def arrive(i):
        return lambda: participant_consent(
            participant_id=participant_arrive(study_slug="effort-demo", external_id=f"rush-{i}")[0].pk, accept=True
        )

    run_together([arrive(i) for i in range(24)])
    counts = [Participant.objects.filter(condition__key=k).count() for k in ("arrests", "income")]
    assert sum(counts) == 24 and abs(counts[0] - counts[1]) <= 1


def test_same_new_id_twice_at_once_creates_one_participant(demo_study):
    results = run_together([lambda: participant_arrive(study_slug="effort-demo", external_id="twin")[0].pk] * 6)
    assert len(set(results)) == 1 and Participant.objects.count() == 1


def test_same_page_from_two_tabs_stores_one_answer(demo_study):
    participant = answer_pages(consented("effort-demo", "tabs"), 1)
    page = participant.plan[1]
    answers = answers_for(participant, page)
    outcomes = run_together(
        [lambda: page_submit(enrolment=enrolment_of(participant), page_key=page["key"], answers=answers).outcome] * 4
    )
    assert sorted(o.value for o in outcomes) == sorted([SubmitOutcome.SAVED.value] + [SubmitOutcome.REPLAYED.value] * 3)
    assert Answer.objects.filter(participant=participant, page=page["key"]).count() == len(answers)
    participant.refresh_from_db()
    assert participant.position == 2


def _postgres_only():
    from tests.conftest import required

    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("needs PostgreSQL (row locks): set DATABASE_URL")


@pytest.mark.postgres
def test_page_view_waiting_on_a_withdrawal_leaves_no_visit(demo_study):
    """Deterministic interleaving: the withdrawal holds the participant's row (answers and visits
    deleted, not yet committed) while a page view records its page; nothing may remain."""
    from django.db import transaction

    from participation.services import page_shown, participant_withdraw

    _postgres_only()
    participant = answer_pages(consented("effort-demo", "held"), 3)
    deleted, viewed = threading.Event(), threading.Event()

    def withdraw():
        with transaction.atomic():
            participant_withdraw(participant_id=participant.pk)
            deleted.set()
            viewed.wait(timeout=1.0)  # the view's INSERT is waiting for this transaction (or done)

    def view():
        deleted.wait(timeout=10)
        timer = threading.Timer(0.3, viewed.set)
        timer.start()
        return page_shown(participant=participant, page_key=participant.plan[3]["key"])

    run_together([withdraw, view])
    assert not PageVisit.objects.filter(participant=participant).exists()
    participant.refresh_from_db()
    assert participant.status == "withdrawn"


@pytest.mark.slow
@pytest.mark.postgres
def test_withdrawals_racing_page_views_leave_nothing(demo_study):
    """30 withdrawals, each racing a page view (GET) and a page submission of the same participant."""
    from participation.services import page_shown, participant_withdraw

    _postgres_only()
    people = [answer_pages(consented("effort-demo", f"race-{i}"), 1) for i in range(30)]
    for participant in people:
        page = participant.plan[1]
        answers = answers_for(participant, page)
        run_together(
            [
                lambda p=participant: participant_withdraw(participant_id=p.pk),
                lambda p=participant: page_shown(participant=p, page_key=p.plan[2]["key"]),
                lambda p=participant, a=answers, k=page["key"]: page_submit(
                    enrolment=enrolment_of(p), page_key=k, answers=a
                ),
            ]
        )
    ids = [p.pk for p in people]
    assert Participant.objects.filter(pk__in=ids, status="withdrawn").count() == 30
    assert not PageVisit.objects.filter(participant__in=ids).exists()
    assert not Answer.objects.filter(participant__in=ids).exists()


def test_simultaneous_arrivals_balance_the_counted_participants(demo_spec, researcher):
    """With a time limit and pilots: abandoned sessions past the limit and pilots hold no place,
    so simultaneous newcomers fill the conditions evenly among those who count."""
    from datetime import timedelta

    from django.utils import timezone

    from studies.services import study_load

    study = study_load(spec={**demo_spec, "time_limit": {"max_minutes": 60}}, owner=researcher).study
    ids = {c.key: c.pk for c in study.conditions.all()}
    for i in range(6):
        consented("effort-demo", f"old-{i}")
    stale, pilots = Participant.objects.order_by("pk")[:4], Participant.objects.order_by("pk")[4:]
    long_ago = timezone.now() - timedelta(hours=2)
    Participant.objects.filter(pk__in=[p.pk for p in stale]).update(condition_id=ids["arrests"], arrived_at=long_ago)
    Participant.objects.filter(pk__in=[p.pk for p in pilots]).update(condition_id=ids["income"], pilot=True)

    def arrive(i):
        return lambda: participant_consent(
            participant_id=participant_arrive(study_slug="effort-demo", external_id=f"new-{i}")[0].pk, accept=True
        )

    run_together([arrive(i) for i in range(20)])
    new = Participant.objects.filter(external_id__startswith="new-")
    counts = [new.filter(condition_id=ids[k]).count() for k in ("arrests", "income")]
    assert counts == [10, 10]
