"""Quotas by stakeholder group: the study file's rules, the caps (hand-worked), the runtime screening
out a participant whose group is full (services and pages), number bins and multiple choice,
minimums (a hand-worked sequence of arrivals), the quota's screened-out message, the export's
columns, and 100 simultaneous arrivals on PostgreSQL with no group above its cap and every minimum
reached."""

import json
import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from participation.enrolment import enrolment_of
from participation.models import Participant
from participation.quotas import tally
from participation.services import page_submit, participant_arrive, participant_consent, participant_withdraw
from studies import services
from studies.quotas import DEFAULT_MESSAGE, QuotaGroup, admission, quota_groups, quotas
from studies.study_file import InvalidStudyFile, validate_study
from tasks.base import AnswerInput
from tests.participation.format2_helpers import example_spec

ROLES = ("Member of the public", "Works in criminal justice", "Affected person or family")
SLUG = "format2-example"
CONNECTIONS = 20


def _with_quotas(quotas: list[dict]) -> dict:
    return {**example_spec(), "quotas": quotas}


def _problems(quotas: list[dict]) -> str:
    """The study file's problems, one per line, with the example's questions and these quotas."""
    with pytest.raises(InvalidStudyFile) as error:
        validate_study(_with_quotas(quotas))
    return str(error.value)


def test_quota_rules_name_the_place_of_each_problem():
    text = _problems(
        [
            {"question": "age", "max": 5},  # a number question without bins
            {"question": "role", "max": {"Pilot": 3}},
            {"question": "role", "share": {"Member of the public": 0.7, "Works in criminal justice": 0.4}},
            {"question": "trust", "max": 2, "of": 100},
        ]
    )
    assert "quotas[0].bins: a number question's quota needs bins" in text
    assert "quotas[1].max.Pilot: 'Pilot' is not one of the options" in text
    assert "quotas[2].question: 'role' already has a quota" in text
    assert "quotas[2].of: a share quota needs the planned sample size 'of'" in text
    assert "quotas[2].share: the shares add up to more than 1" in text
    assert (
        "quotas[3].question: 'trust' is not the screening or a choice or number questionnaire question "
        "(role, age, news)" in text
    )
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


def _answer(participant: Participant, role: str, age: int = 30, news: list[str] | None = None):
    answers = [
        AnswerInput("about/role", "questionnaire", "about", "", None, role),
        AnswerInput("about/age", "questionnaire", "about", "", age, ""),
        AnswerInput("about/trust", "questionnaire", "about", "", 3, ""),
    ]
    if news:
        answers.append(AnswerInput("about/news", "questionnaire", "about", "", None, json.dumps(news)))
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
    assert tally(SLUG, quotas(Participant.objects.get(pk=first.pk).study.spec)) == {"role": ({ROLES[0]: 2}, 3)}
    participant_withdraw(participant_id=second.pk)
    assert _answer(_arrive("p5"), ROLES[0]).status == "active"  # the withdrawal freed a place


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        (None, DEFAULT_MESSAGE),
        ("<b>Sorry</b>, we have enough\nreturn it", "&lt;b&gt;Sorry&lt;/b&gt;, we have enough<br>return it"),
    ],
)
def test_screened_out_page_shows_the_quotas_message(client, db, researcher, message, shown):
    """The quota's message (escaped) or the default one, with the screened-out code, to a participant who came
    from Prolific (a code is Prolific's; others get a plain end page); the study's screened_out_message stays the
    screening question's."""
    quota = {"question": "role", "max": 1} | ({"message": message} if message else {})
    spec = _with_quotas([quota])
    spec["prolific"] = {"completion_codes": {"screened_out": "FULL01"}, "screened_out_message": "Not eligible."}
    services.study_load(spec=spec, owner=researcher)
    _answer(_arrive("first"), ROLES[1])
    client.get(f"/s/{SLUG}/?PROLIFIC_PID=second&STUDY_ID=s1&SESSION_ID=x1")  # codes are Prolific's: from Prolific
    client.post(f"/s/{SLUG}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id="second")
    for page in participant.plan[: _about(participant) + 1]:
        html = client.get(f"/s/{SLUG}/page/").content.decode()
        assert f'value="{page["key"]}"' in html
        data = {"role": ROLES[1], "age": "40", "trust": "4"} if page["key"] == "about" else {}
        response = client.post(f"/s/{SLUG}/page/", {"page_key": page["key"], **data})
    assert response.status_code == 302 and response["Location"].endswith("/done/")
    done = client.get(response["Location"]).content.decode()
    assert "FULL01" in done and shown in done and "Not eligible." not in done and "<b>Sorry" not in done
    participant.refresh_from_db()
    assert participant.status == "screened_out" and participant.quota_screened_out == f"role = {ROLES[1]}"
    with CaptureQueriesContext(connection) as queries:  # a reload reads the quota from the session
        again = client.get(response["Location"]).content.decode()
    assert shown in again and not any("quota_screened_out" in q["sql"] for q in queries.captured_queries)


def _rush(researcher, quotas: list[dict], roles: list[str]) -> list[str]:
    """Each role's participant answers at once (threads released together); their statuses."""
    from tests.surveys.test_concurrency import _postgres_only

    _postgres_only()
    services.study_load(spec=_with_quotas(quotas), owner=researcher)
    people = [_arrive(f"rush-{i}") for i in range(len(roles))]
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
    return statuses


def _admitted(roles: list[str], statuses: list[str]) -> dict[str, int]:
    admitted = {
        role: sum(1 for r, s in zip(roles, statuses, strict=True) if r == role and s == "active") for role in ROLES
    }
    for role in ROLES:
        assert Participant.objects.filter(answers__text=role, status="active").count() == admitted[role]
    return admitted


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_hundred_simultaneous_arrivals_never_overfill_a_group(researcher):
    caps = {ROLES[0]: 20, ROLES[1]: 15, ROLES[2]: 40}
    roles = [ROLES[i % 3] for i in range(100)]  # 34, 33 and 33 want in
    statuses = _rush(researcher, [{"question": "role", "max": caps}], roles)
    admitted = _admitted(roles, statuses)
    for role in ROLES:
        assert admitted[role] == min(caps[role], roles.count(role)), role  # full to the cap, never above it
    assert statuses.count("screened_out") == (34 - 20) + (33 - 15)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_hundred_simultaneous_arrivals_reach_every_minimum(researcher):
    """of 30 with minimums 10 (second role) and 12 (third) and a cap of 25 (first): whatever order the
    100 arrivals take, the quota admits exactly 30, the first role at most 30 - 10 - 12 = 8 and each
    minimum is reached (60 of the arrivals are the first role's, 20 each the others')."""
    quota = {"question": "role", "max": {ROLES[0]: 25}, "min": {ROLES[1]: 10, ROLES[2]: 12}, "of": 30}
    roles = [ROLES[0]] * 60 + [ROLES[1 + i % 2] for i in range(40)]
    statuses = _rush(researcher, [quota], roles)
    admitted = _admitted(roles, statuses)
    assert sum(admitted.values()) == 30
    assert admitted[ROLES[0]] <= 8 and admitted[ROLES[1]] >= 10 and admitted[ROLES[2]] >= 12, admitted
    reasons = set(Participant.objects.filter(status="screened_out").values_list("quota_screened_out", flat=True))
    assert reasons == {"role: minimums"}


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


def test_number_bins_and_multiple_choice_rules():
    bins = {"18-29": [18, 29], "30-44": [30, 44], "45+": [45, None]}
    text = _problems(
        [
            {"question": "age", "bins": {**bins, "40-50": [40, 50], "odd": [30, 20]}, "max": 5},
            {"question": "role", "bins": bins, "min": {ROLES[0]: 3}},
            {"question": "news", "min": {"TV": 8, "Radio": 1}, "max": {"TV": 5}, "of": 10},
        ]
    )
    assert "quotas[0].bins.40-50: overlaps bin '30-44'" in text
    assert "quotas[0].bins.odd: the low bound is above the high bound" in text
    assert "quotas[1].bins: only used with number questions" in text
    assert "quotas[1].of: a min quota needs the planned sample size 'of'" in text
    assert "quotas[2].min.Radio: 'Radio' is not one of the options" in text
    ok = {"question": "news", "min": {"TV": 6}, "max": {"TV": 5}, "of": 10}
    with pytest.raises(InvalidStudyFile, match=r"quotas\[0\].min.TV: above the group's cap \(5\)"):
        validate_study(_with_quotas([ok]))
    with pytest.raises(InvalidStudyFile, match=r"quotas\[0\].min: the minimums add up to more than of"):
        validate_study(_with_quotas([{"question": "age", "bins": bins, "min": 4, "of": 10}]))
    with pytest.raises(InvalidStudyFile, match=r"quotas\[0\]: give max, share or min"):
        validate_study(_with_quotas([{"question": "age", "bins": bins}]))
    age = quotas(validate_study(_with_quotas([{"question": "age", "bins": bins, "max": {"18-29": 2}}])))[0]
    assert age.groups == (QuotaGroup("age", "about/age", "18-29", 2, 0, 18, 29),)
    assert [age.groups_of("", x) for x in (17, 18, 29, 29.5, 30)] == [[], ["18-29"], ["18-29"], [], []]


def test_number_bins_and_multiple_choice_screen_out(db, researcher):
    """Ages 18-29 at most 2, 45+ at most 1; news at most 2 per option, a participant counts in each
    option chosen: after TV+Newspapers and TV, TV is full (a third TV reader is screened out) while
    Newspapers holds 1 of 2."""
    bins = {"18-29": [18, 29], "30-44": [30, 44], "45+": [45, None]}
    _study(db, researcher, [{"question": "age", "bins": bins, "max": {"18-29": 2, "45+": 1}}])
    ages = [18, 29, 25, 30, 44, 70, 45]
    statuses = [_answer(_arrive(f"a{i}"), ROLES[0], age=age).status for i, age in enumerate(ages)]
    assert statuses == ["active", "active", "screened_out", "active", "active", "active", "screened_out"]
    assert Participant.objects.get(external_id="a2").quota_screened_out == "age = 18-29"
    assert Participant.objects.get(external_id="a6").quota_screened_out == "age = 45+"

    Participant.objects.all().delete()
    services.study_load(spec=_with_quotas([{"question": "news", "max": 2}]), owner=researcher)
    chosen = [["TV", "Newspapers"], ["TV"], ["TV", "Social media"], ["Newspapers"], ["Newspapers"], None]
    statuses = [_answer(_arrive(f"n{i}"), ROLES[0], news=news).status for i, news in enumerate(chosen)]
    assert statuses == ["active", "active", "screened_out", "active", "screened_out", "active"]
    spec = Participant.objects.get(external_id="n0").study.spec
    assert tally(SLUG, quotas(spec)) == {"news": ({"TV": 2, "Newspapers": 2, "Social media": 0}, 3)}


def test_minimums_hand_worked_sequence():
    """min 2 of group A, 1 of B, of 4 (C has none). R = places left, D = shortfall to the minimums;
    a newcomer is admitted iff the shortfall after them D' <= R - 1:
    A: D' 2 <= 3 in; A: D' 2 <= 2 in; A: D' 1 <= 1 in (one place spare for B); C: D' 1 > 0 out;
    B: D' 0 <= 0 in; C and B: the 4 places are taken, out."""
    spec = validate_study(_with_quotas([{"question": "role", "min": {ROLES[0]: 2, ROLES[1]: 1}, "of": 4}]))
    (quota,) = quotas(spec)
    counts, answered, outcomes = dict.fromkeys((g.text for g in quota.groups), 0), 0, []
    for group in "AAACBCB":
        role = ROLES["ABC".index(group)]
        reason = admission(quota, counts, answered, quota.groups_of(role, None))
        outcomes.append(reason or "in")
        if not reason:
            answered += 1
            counts.update({role: counts[role] + 1} if role in counts else {})
    out = "role: minimums"
    assert outcomes == ["in", "in", "in", out, "in", out, out]
    assert counts == {ROLES[0]: 3, ROLES[1]: 1}
    capped = quotas(validate_study(_with_quotas([{"question": "role", "max": {ROLES[0]: 1}, "min": 1, "of": 5}])))[0]
    assert admission(capped, {r: 1 for r in ROLES}, 3, [ROLES[0]]) == f"role = {ROLES[0]}"  # the cap first


def test_minimums_through_the_pages(db, researcher):
    """The hand-worked sequence above, through page_submit, with the reasons stored."""
    _study(db, researcher, [{"question": "role", "min": {ROLES[0]: 2, ROLES[1]: 1}, "of": 4}])
    people = [(_arrive(f"m{i}"), ROLES["ABC".index(g)]) for i, g in enumerate("AAACBCB")]
    statuses = [_answer(p, role).status for p, role in people]
    assert statuses == ["active"] * 3 + ["screened_out", "active", "screened_out", "screened_out"]
    reasons = [Participant.objects.get(pk=p.pk).quota_screened_out for p, _ in people]
    assert reasons == ["", "", "", "role: minimums", "", "role: minimums", "role: minimums"]


def test_export_records_quota_group_and_screening_quota(db, researcher):
    from research.export import export_tables
    from research.tables import COLUMNS

    _study(db, researcher, [{"question": "news", "max": 1}])
    _answer(_arrive("both"), ROLES[0], news=["TV", "Newspapers"])
    _answer(_arrive("late"), ROLES[0], news=["TV"])
    _answer(_arrive("none"), ROLES[0])
    rows = export_tables(SLUG).participants
    by_id = dict(
        zip(rows["participant_id"], zip(rows["quota_group"], rows["quota_screened_out"], strict=True), strict=True)
    )
    pseudonyms = {p.external_id: str(p.pseudonym) for p in Participant.objects.all()}
    assert by_id[pseudonyms["both"]] == ("news = TV;news = Newspapers", "")
    assert by_id[pseudonyms["late"]] == ("", "news = TV")  # screened out: not counted
    assert by_id[pseudonyms["none"]] == ("", "")
    assert len(rows) == 3
    assert {"quota_group", "quota_screened_out"} <= set(COLUMNS["participants"])


def test_dashboard_shows_minimums_and_groups_without_cap(client, db, researcher):
    _study(db, researcher, [{"question": "role", "max": {ROLES[0]: 4}, "min": {ROLES[1]: 1}, "of": 10}])
    _answer(_arrive("m0"), ROLES[1])
    client.force_login(researcher)
    html = client.get(f"/researcher/studies/{SLUG}/").content.decode()
    rows = html.split("<h2>Quotas</h2>", 1)[1].split("</table>", 1)[0]
    assert f'<td>{ROLES[0]}</td><td class="num">0 / 4</td><td class="num"></td>' in rows
    assert f'<td>{ROLES[1]}</td><td class="num">1 / no cap</td><td class="num">1 reached</td>' in rows
    assert "Affected person" not in rows  # neither capped nor with a minimum


def test_the_default_quota_message_is_in_the_participants_language():
    from django.utils import translation

    from studies.quotas import quota_message

    assert quota_message({}, "") == DEFAULT_MESSAGE
    with translation.override("de"):
        assert quota_message({}, "").startswith("Vielen Dank für Ihr Interesse.")
