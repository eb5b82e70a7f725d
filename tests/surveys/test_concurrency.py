"""Simultaneous arrivals and double submissions against the real database (threads, one connection each)."""

import threading

import pytest
from django.db import connection

from surveys.enrolment import enrolment_of
from surveys.models import Answer, Participant
from surveys.services import SubmitOutcome, page_submit, participant_arrive, participant_consent
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
