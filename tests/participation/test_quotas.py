"""Quotas by stakeholder group: the study file's rules, the caps (hand-worked), the runtime screening
out a participant whose group is full (services and pages), and 100 simultaneous arrivals on
PostgreSQL with no group above its cap."""

import threading

import pytest
from django.db import connection

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.quotas import members
from participation.services import page_submit, participant_arrive, participant_consent, participant_withdraw
from studies import services
from studies.quotas import QuotaGroup, quota_groups
from studies.study_file import InvalidStudyFile, validate_study
from tasks.base import AnswerInput
from tests.participation.format2_helpers import example_spec

ROLES = ("Member of the public", "Works in criminal justice", "Affected person or family")
SLUG = "format2-example"
CONNECTIONS = 20


def _with_quotas(quotas: list[dict]) -> dict:
    return {**example_spec(), "quotas": quotas}


def test_quota_rules_name_the_place_of_each_problem():
    spec = _with_quotas(
        [
            {"question": "age", "max": 5},  # a number question
            {"question": "role", "max": {"Pilot": 3}},
            {"question": "role", "share": {"Member of the public": 0.7, "Works in criminal justice": 0.4}},
            {"question": "trust", "max": 2, "of": 100},
        ]
    )
    with pytest.raises(InvalidStudyFile) as error:
        validate_study(spec)
    text = str(error.value)
    assert "quotas[0].question: 'age' is not the screening or a single-choice questionnaire question (role)" in text
    assert "quotas[1].max.Pilot: 'Pilot' is not one of the options" in text
    assert "quotas[2].question: 'role' already has a quota" in text
    assert "quotas[2].of: a share quota needs the planned sample size 'of'" in text
    assert "quotas[2].share: the shares add up to more than 1" in text
    assert "quotas[3].question: 'trust'" in text
    with pytest.raises(InvalidStudyFile, match=r"quotas\[0\]: give either max or share"):
        validate_study(_with_quotas([{"question": "role", "max": 2, "share": {ROLES[0]: 0.5}, "of": 10}]))
    with pytest.raises(InvalidStudyFile, match=r"quotas\[0\].max: .*is not valid"):
        validate_study(_with_quotas([{"question": "role", "max": 0}]))


def test_caps_hand_worked():
    """At most 100 per role; 50% women within +-5 points of 200: at most floor(0.55 x 200) = 110
    (the example's roles stand in for the groups); tolerance 0.02 of 150: floor(0.32 x 150) = 48."""
    per_role = quota_groups(validate_study(_with_quotas([{"question": "role", "max": 100}])))
    assert per_role == [QuotaGroup("role", "about/role", role, 100) for role in ROLES]
    share = {"question": "role", "share": {ROLES[0]: 0.5, ROLES[1]: 0.3}, "of": 200}
    assert [g.cap for g in quota_groups(validate_study(_with_quotas([share])))] == [110, 70]
    narrow = {**share, "tolerance": 0.02, "of": 150}
    assert [g.cap for g in quota_groups(validate_study(_with_quotas([narrow])))] == [78, 48]


def _study(db, researcher, quotas: list[dict]):
    return services.study_load(spec=_with_quotas(quotas), owner=researcher).study


def _arrive(name: str, *, pilot: bool = False) -> Participant:
    participant = participant_arrive(study_slug=SLUG, external_id=name)[0]
    if pilot:
        Participant.objects.filter(pk=participant.pk).update(pilot=True)
    participant_consent(participant_id=participant.pk, accept=True)
    participant.refresh_from_db()
    for page in participant.plan[: _about(participant)]:  # the pages before the questionnaire
        assert page["kind"] == "instructions"
        page_submit(enrolment=enrolment_of(participant), page_key=page["key"], answers=[])
    participant.refresh_from_db()
    return participant


def _about(participant: Participant) -> int:
    return next(i for i, page in enumerate(participant.plan) if page["key"] == "about")


def _answer(participant: Participant, role: str):
    answers = [
        AnswerInput("about/role", "questionnaire", "about", "", None, role),
        AnswerInput("about/age", "questionnaire", "about", "", 30, ""),
        AnswerInput("about/trust", "questionnaire", "about", "", 3, ""),
    ]
    return page_submit(enrolment=enrolment_of(participant), page_key="about", answers=answers)


def test_a_full_group_screens_out_and_a_withdrawal_frees_its_place(db, researcher):
    _study(db, researcher, [{"question": "role", "max": {ROLES[0]: 2}}])
    first, second, third, other = (_arrive(f"p{i}") for i in range(4))
    assert _answer(first, ROLES[0]).status == "active"
    assert _answer(second, ROLES[0]).status == "active"
    assert _answer(third, ROLES[0]).status == "screened_out"  # the group holds its 2
    assert _answer(other, ROLES[1]).status == "active"  # no cap on that role
    pilot = _arrive("pilot", pilot=True)
    assert _answer(pilot, ROLES[0]).status == "active"  # pilots are neither counted nor screened out
    group = quota_groups(Participant.objects.get(pk=first.pk).study.spec)
    assert members(SLUG, group) == {("about/role", ROLES[0]): 2}
    participant_withdraw(participant_id=second.pk)
    assert _answer(_arrive("p5"), ROLES[0]).status == "active"  # the withdrawal freed a place


def test_screened_out_page_shows_the_screened_out_outcome(client, db, researcher):
    spec = _with_quotas([{"question": "role", "max": 1}])
    spec["prolific"] = {"completion_codes": {"screened_out": "FULL01"}, "screened_out_message": "Thank you: full."}
    services.study_load(spec=spec, owner=researcher)
    _answer(_arrive("first"), ROLES[1])
    client.get(f"/s/{SLUG}/?participant_label=second")
    client.post(f"/s/{SLUG}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id="second")
    for page in participant.plan[: _about(participant) + 1]:
        html = client.get(f"/s/{SLUG}/page/").content.decode()
        assert f'value="{page["key"]}"' in html
        data = {"role": ROLES[1], "age": "40", "trust": "4"} if page["key"] == "about" else {}
        response = client.post(f"/s/{SLUG}/page/", {"page_key": page["key"], **data})
    assert response.status_code == 302 and response["Location"].endswith("/done/")
    done = client.get(response["Location"]).content.decode()
    assert "FULL01" in done and "Thank you: full." in done
    participant.refresh_from_db()
    assert participant.status == "screened_out"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_hundred_simultaneous_arrivals_never_overfill_a_group(researcher):
    from tests.surveys.test_concurrency import _postgres_only

    _postgres_only()
    caps = {ROLES[0]: 20, ROLES[1]: 15, ROLES[2]: 40}
    services.study_load(spec=_with_quotas([{"question": "role", "max": caps}]), owner=researcher)
    people = [_arrive(f"rush-{i}") for i in range(100)]
    roles = [ROLES[i % 3] for i in range(100)]  # 34, 33 and 33 want in
    barrier = threading.Barrier(len(people))
    # 100 threads released at once; at most CONNECTIONS hold a database connection at a time (the
    # shared server's max_connections), as a pool of web workers would.
    connections = threading.BoundedSemaphore(CONNECTIONS)
    statuses: list[str] = [""] * len(people)
    errors: list[BaseException] = []

    def arrive(i: int) -> None:
        barrier.wait()
        with connections:
            try:
                statuses[i] = _answer(people[i], roles[i]).status
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
            finally:
                connection.close()

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(len(people))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    wanted = {role: roles.count(role) for role in ROLES}
    for role in ROLES:
        admitted = sum(1 for r, s in zip(roles, statuses, strict=True) if r == role and s == "active")
        assert admitted == min(caps[role], wanted[role]), role  # full to the cap, never above it
        assert Participant.objects.filter(answers__text=role, status="active").count() == admitted
    assert statuses.count("screened_out") == (34 - 20) + (33 - 15)


def test_dashboard_shows_each_quotas_fill(client, db, researcher):
    _study(db, researcher, [{"question": "role", "share": {ROLES[0]: 0.5, ROLES[1]: 0.3}, "of": 10}])
    for i in range(2):
        _answer(_arrive(f"m{i}"), ROLES[1])  # cap floor(0.35 x 10) = 3
    _answer(_arrive("pilot", pilot=True), ROLES[1])  # not counted
    client.force_login(researcher)
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    rows = html.split("<h2>Quotas</h2>", 1)[1].split("</table>", 1)[0]
    assert '<td>Member of the public</td><td class="num">0 / 5</td>' in rows
    assert '<td>Works in criminal justice</td><td class="num">2 / 3</td>' in rows
    assert 'value="2"' in rows and "67%" in rows and "<strong>full" not in rows
    _answer(_arrive("m3"), ROLES[1])
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    assert "<strong>full</strong>" in html.split("<h2>Quotas</h2>", 1)[1].split("</table>", 1)[0]


def test_format1_quota_over_the_screening_answer(db, demo_spec, researcher):
    screening = {"question": "Your role?", "options": ["Judge", "Public", "Neither"], "eligible": ["Judge", "Public"]}
    spec = {**demo_spec, "screening": screening, "quotas": [{"question": "screening", "max": 1}]}
    services.study_load(spec=spec, owner=researcher)
    statuses = []
    for i, choice in enumerate(["Judge", "Judge", "Public", "Public"]):
        participant = participant_arrive(study_slug=spec["slug"], external_id=f"f1-{i}")[0]
        participant_consent(participant_id=participant.pk, accept=True)
        participant.refresh_from_db()
        assert participant.plan[0]["key"] == "screening"
        answer = AnswerInput("screening", "screening", "", "", 1, choice)
        statuses.append(page_submit(enrolment=enrolment_of(participant), page_key="screening", answers=[answer]).status)
    assert statuses == ["active", "screened_out", "active", "screened_out"]
