import copy

import pytest
from django.db import IntegrityError, transaction

from participation.enrolment import enrolment_of
from participation.models import Answer, PageVisit, Participant
from participation.plan import plan_for
from participation.services import (
    InvalidParticipantId,
    SubmitOutcome,
    page_submit,
    participant_arrive,
    participant_consent,
)
from studies.format1 import format1_to_format2
from studies.models import Study
from studies.services import StudyNotFound, spec_digest, study_load
from studies.study_file import validate_study
from tests.surveys.helpers import answer_pages, answers_for, consented

pytestmark = pytest.mark.django_db


def test_loading_the_same_file_again_changes_nothing(demo_spec):
    first = study_load(spec=demo_spec)
    again = study_load(spec=copy.deepcopy(demo_spec))
    assert (first.action, again.action) == ("created", "unchanged")
    assert Study.objects.count() == 1 and again.study.pk == first.study.pk


def test_a_format1_file_is_stored_as_its_conversion_and_reloads_unchanged(demo_spec):
    """Conversion at load comes before the content hash: the same format 1 file again is no new version."""
    first = study_load(spec=demo_spec)
    study = first.study
    assert study.spec == validate_study(format1_to_format2(validate_study(demo_spec)))
    assert study.spec["format"] == 2 and study.format1_spec == validate_study(demo_spec)
    assert study.spec_hash == spec_digest(study.spec)
    assert [(c.key, c.feature, c.unit) for c in study.conditions.all()] == [
        (c["key"], c["feature"], c["unit"]) for c in demo_spec["conditions"]
    ]
    again = study_load(spec=copy.deepcopy(demo_spec))
    assert again.action == "unchanged" and again.study.pk == study.pk and Study.objects.count() == 1


def test_changed_study_without_participants_is_updated_in_place(demo_spec):
    study_load(spec=demo_spec)
    edited = copy.deepcopy(demo_spec)
    edited["title"] = "New title"
    result = study_load(spec=edited)
    assert result.action == "replaced" and result.study.version == 1 and result.study.title == "New title"
    assert result.study.conditions.count() == 2


def test_changed_study_with_answers_becomes_a_new_version(demo_study, demo_spec):
    participant = consented("effort-demo", "p1")
    answer_pages(participant, 3)
    edited = copy.deepcopy(demo_spec)
    edited["conditions"][0]["subjects"][0]["risk_score"] = 0.5
    result = study_load(spec=edited)
    assert result.action == "new_version" and result.study.version == 2
    old = Study.objects.get(slug="effort-demo", version=1)
    assert (
        old.format1_spec["conditions"][0]["subjects"][0]["risk_score"]
        == demo_spec["conditions"][0]["subjects"][0]["risk_score"]
    )
    assert old.spec != result.study.spec
    participant.refresh_from_db()
    assert participant.study_id == old.pk  # keeps what they saw
    newcomer, _ = participant_arrive(study_slug="effort-demo", external_id="p2")
    assert newcomer.study_id == result.study.pk
    assert result.study.owner == old.owner


def test_plan_order_is_randomised_per_seed_and_complete(demo_spec):
    """The stored (converted) demo's plans: format 1's page keys, in an order drawn per seed."""
    spec = study_load(spec=demo_spec).study.spec
    a, b = plan_for(spec, "arrests", 1), plan_for(spec, "arrests", 2)
    assert plan_for(spec, "arrests", 1) == a
    assert [p["key"] for p in a] != [p["key"] for p in b]
    assert sorted(p["key"] for p in a) == sorted(p["key"] for p in b)
    pairs = [p for p in a if p["kind"] == "pair_distance"]
    assert len(pairs) == 3 * 4 * 3 and all(p["key"].startswith("pair/set") for p in pairs)
    assert sum(p["kind"] == "attention" for p in a) == 3
    assert sorted(p["key"] for p in a if p["kind"] == "fair_score") == ["output/set1", "output/set2", "output/set3"]
    assert a[0]["kind"] == "instructions" and a[-1]["key"] == "disagreement"
    # each pair's three questions come in the order trajectory, aggregate, overall
    for i, p in enumerate(a):
        if p["kind"] == "pair_distance" and p["measure"] == "trajectory":
            assert [a[i + 1]["measure"], a[i + 2]["measure"]] == ["aggregate", "overall"]


def test_arrival_validates_ids_and_study(demo_study):
    with pytest.raises(InvalidParticipantId):
        participant_arrive(study_slug="effort-demo", external_id="")
    with pytest.raises(InvalidParticipantId):
        participant_arrive(study_slug="effort-demo", external_id="<script>")
    with pytest.raises(StudyNotFound):
        participant_arrive(study_slug="nope", external_id="p1")


def test_returning_participant_is_the_same_participant(demo_study):
    first, created = participant_arrive(study_slug="effort-demo", external_id="5f1a", prolific_study_id="S1")
    again, created_again = participant_arrive(study_slug="effort-demo", external_id="5f1a")
    assert created and not created_again and first.pk == again.pk


def test_assignment_is_balanced(demo_study):
    for i in range(11):
        consented("effort-demo", f"p{i}")
    counts = [Participant.objects.filter(condition__key=k).count() for k in ("arrests", "income")]
    assert sorted(counts) == [5, 6]


def test_declining_ends_without_a_condition(demo_study):
    participant, _ = participant_arrive(study_slug="effort-demo", external_id="p1")
    participant = participant_consent(participant_id=participant.pk, accept=False)
    assert participant.status == "declined" and participant.condition is None
    # a later "accept" cannot override the decision
    assert participant_consent(participant_id=participant.pk, accept=True).status == "declined"


def test_replayed_page_changes_nothing(demo_study):
    participant = consented("effort-demo", "p1")
    participant = answer_pages(participant, 2)
    page = participant.plan[1]
    outcome = page_submit(
        enrolment=enrolment_of(participant), page_key=page["key"], answers=answers_for(participant, page)
    ).outcome
    assert outcome is SubmitOutcome.REPLAYED
    assert Answer.objects.filter(participant=participant, page=page["key"]).count() == 1
    participant.refresh_from_db()
    assert participant.position == 2


def test_out_of_order_page_is_refused(demo_study):
    participant = consented("effort-demo", "p1")
    page = participant.plan[5]
    outcome = page_submit(enrolment=enrolment_of(participant), page_key=page["key"], answers=[]).outcome
    assert outcome is SubmitOutcome.OUT_OF_ORDER
    assert not Answer.objects.filter(participant=participant).exists()


def test_completion_only_after_last_page(demo_study):
    participant = consented("effort-demo", "p1")
    n = len(participant.plan)
    participant = answer_pages(participant, n - 1)
    assert participant.status == "active" and participant.completed_at is None
    participant = answer_pages(participant)
    assert participant.status == "completed" and participant.position == n
    assert PageVisit.objects.filter(participant=participant, submitted_at__isnull=False).count() == n
    # a finished participant cannot submit again
    outcome = page_submit(enrolment=enrolment_of(participant), page_key="nonexistent", answers=[]).outcome
    assert outcome is SubmitOutcome.CLOSED


@pytest.mark.parametrize(
    ("measure", "number"),
    [("overall", 0), ("overall", 12), ("prediction", 101), ("fair_score", 1.5), ("k_score", -0.1), ("agree", 2)],
)
def test_database_rejects_out_of_range_answers(demo_study, measure, number):
    participant = consented("effort-demo", "p1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(participant=participant, page="x", question="x", measure=measure, number=number)


def test_database_allows_one_answer_per_question(demo_study):
    participant = consented("effort-demo", "p1")
    Answer.objects.create(participant=participant, page="x", question="q", measure="overall", number=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(participant=participant, page="x", question="q", measure="overall", number=4)


def test_integrity_check_counts_answers_and_balance(demo_study):
    from participation.integrity import check_integrity

    for i in range(3):
        answer_pages(consented("effort-demo", f"i{i}"), 10 * i)
    report = check_integrity("effort-demo")
    assert report.participants == 3 and not report.wrong and report.balanced
    victim = Participant.objects.get(external_id="i2")
    Answer.objects.filter(participant=victim).first().delete()
    assert check_integrity("effort-demo").wrong == [str(victim.pseudonym)]


def test_integrity_check_reports_withdrawn_participants_separately(demo_study):
    from django.core.management import CommandError, call_command

    from participation.integrity import check_integrity
    from participation.services import participant_withdraw

    for i in range(3):
        answer_pages(consented("effort-demo", f"w{i}"), 5 + i)
    leaver = Participant.objects.get(external_id="w1")
    participant_withdraw(participant_id=leaver.pk)
    report = check_integrity("effort-demo")
    assert report.withdrawn == 1 and report.wrong == [] and report.withdrawn_with_data == [] and report.ok
    assert "1 withdrawn, 0 of them with answers or page visits left" in str(report)
    call_command("check_integrity", "effort-demo")  # exits 0 after a legitimate withdrawal
    # Anything of a withdrawn participant left behind is the failure for them.
    PageVisit.objects.create(participant=leaver, page="instructions", first_shown_at=leaver.arrived_at)
    report = check_integrity("effort-demo")
    assert report.withdrawn_with_data == [str(leaver.pseudonym)] and report.wrong == [] and not report.ok
    with pytest.raises(CommandError):
        call_command("check_integrity", "effort-demo")


def test_page_view_read_before_a_withdrawal_stores_no_visit(demo_study):
    """A page GET reads the participant, then a withdrawal commits, then the GET records the page
    as shown: the visit must not be inserted (it would outlive the withdrawal)."""
    from participation.services import page_shown, participant_withdraw

    participant = answer_pages(consented("effort-demo", "racer"), 2)
    seen_by_the_get = Participant.objects.get(pk=participant.pk)  # still active when read
    participant_withdraw(participant_id=participant.pk)
    assert page_shown(participant=seen_by_the_get, page_key=participant.plan[2]["key"]) is False
    assert not PageVisit.objects.filter(participant=participant).exists()
    # An active participant's page is still recorded, once.
    other = consented("effort-demo", "stays")
    assert page_shown(participant=other, page_key=other.plan[0]["key"]) is True
    assert page_shown(participant=other, page_key=other.plan[0]["key"]) is False
    assert PageVisit.objects.filter(participant=other).count() == 1
