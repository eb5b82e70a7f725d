"""Prolific outcomes: a completion code and link per outcome (completed, failed attention checks,
screened out, declined consent), Prolific's request to return the submission, the screening question."""

import html
import json

import pytest

from participation.models import Answer
from participation.outcomes import (
    DEFAULT_FAILED_ATTENTION_MESSAGE,
    DEFAULT_SCREENED_OUT_MESSAGE,
    Review,
    outcome_of,
    review,
)
from studies.services import stored_file
from studies.study_file import InvalidStudyFile, validate_study
from tests.participation.format2_helpers import EXAMPLE
from tests.surveys.prolific_helpers import CODES, arrive, finish, load_variant, post_page

pytestmark = pytest.mark.django_db

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="
SCREENING = {"question": "Do you live in the UK?", "options": ["Yes", "No"], "eligible": ["Yes"]}


def _text(response) -> str:
    return html.unescape(response.content.decode())


def test_completed_participant_gets_the_completed_code_and_its_prolific_link(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    done = finish(client, arrive(client, "p-ok"), failed_checks=1)  # one failed check is below Prolific's two
    text = _text(done)
    assert 'id="completion-code">COMP1<' in text and f'href="{PROLIFIC}COMP1"' in text
    assert f'content="15;url={PROLIFIC}COMP1"' in text  # the automatic redirect
    assert "FAIL1" not in text and "return your submission" not in text


def test_the_single_completion_code_still_works_as_the_completed_one(client, demo_study):
    done = finish(client, arrive(client, "p-old"))
    text = _text(done)
    completion = demo_study.spec["completion"]
    assert f'id="completion-code">{completion["code"]}<' in text and f'href="{completion["url"]}"' in text


def test_two_failed_attention_checks_ask_to_return_the_submission(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    done = finish(client, arrive(client, "p-inattentive"), failed_checks=2)
    text = _text(done)
    assert DEFAULT_FAILED_ATTENTION_MESSAGE in text and "please return your submission on Prolific" in text
    assert 'id="completion-code">FAIL1<' in text and f'href="{PROLIFIC}FAIL1"' in text
    assert "COMP1" not in text and "http-equiv" not in text  # the message is read, not skipped by a redirect
    assert client.get("/s/effort-demo/done/").content == done.content  # a reload: same outcome (from the session)


def test_failed_attention_without_its_code_shows_the_edited_message_and_no_code(client, demo_spec, researcher):
    message = "Please <b>return</b> your submission, as Prolific's policy asks."
    checks = {**demo_spec["attention_checks"], "return_if_failed": 3}
    load_variant(demo_spec, researcher, attention_checks=checks, prolific={"failed_attention_message": message})
    two = finish(client, arrive(client, "p-two"), failed_checks=2)
    assert 'id="completion-code">C1A2B3D4<' in _text(two)  # 2 < return_if_failed = 3: completed
    client.cookies.clear()
    three = finish(client, arrive(client, "p-three"), failed_checks=3)
    body = three.content.decode()
    assert "Please &lt;b&gt;return&lt;/b&gt; your submission" in body  # the researcher's text, escaped
    assert "completion-code" not in body and "completion-link" not in body and "C1A2B3D4" not in body


def test_ineligible_screening_answer_ends_the_study_with_the_screened_out_code(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, screening=SCREENING, prolific={"completion_codes": CODES})
    participant = arrive(client, "p-abroad")
    first = participant.plan[0]
    assert first == {"key": "screening", "kind": "screening"} and participant.plan[1]["key"] == "instructions"
    page = client.get("/s/effort-demo/page/")
    assert "Do you live in the UK?" in _text(page)
    response = post_page(client, participant, first, {"choice": "No"})
    assert response.status_code == 302 and response["Location"] == "/s/effort-demo/done/"
    participant.refresh_from_db()
    assert participant.status == "screened_out" and participant.position == 1
    assert Answer.objects.get(participant=participant).text == "No"
    text = _text(client.get("/s/effort-demo/done/"))
    assert DEFAULT_SCREENED_OUT_MESSAGE in text and 'id="completion-code">SCRN1<' in text and f"{PROLIFIC}SCRN1" in text
    assert client.get("/s/effort-demo/page/")["Location"] == "/s/effort-demo/done/"  # no more pages


def test_eligible_screening_answer_goes_on_to_the_instructions(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, screening=SCREENING)
    participant = arrive(client, "p-uk")
    response = post_page(client, participant, participant.plan[0], {"choice": "Yes"})
    assert response.status_code == 200 and "Instructions" in _text(response)
    participant.refresh_from_db()
    assert participant.status == "active" and participant.position == 1


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"prolific": {"completion_codes": {"failed_attention": "a b"}}}, "completion_codes.failed_attention:"),
        ({"prolific": {"completion_codes": {"declined": "no/consent"}}}, "completion_codes.declined:"),
        ({"prolific": {"completion_codes": {"returned": "X"}}}, "prolific.completion_codes: Additional properties"),
        (
            {"prolific": {"completion_codes": {"screened_out": "SAME1", "declined": "SAME1"}}},
            "prolific.completion_codes: 'SAME1' is the code of more than one outcome",
        ),
        ({"prolific": {"completion_codes": {"declined": "C1A2B3D4"}}}, "'C1A2B3D4' is the code of more than one"),
        ({"attention_checks": {"items": [], "return_if_failed": 2}}, "attention_checks.return_if_failed: cannot"),
        ({"screening": {**SCREENING, "eligible": ["Maybe"]}}, "screening.eligible[0]: 'Maybe' is not one of the"),
        ({"screening": {**SCREENING, "eligible": ["Yes", "No"]}}, "screening.eligible: every option is eligible"),
        ({"time_limit": {"max_minutes": 0}}, "time_limit.max_minutes: must be >= 1"),
        ({"time_limit": {"may_finish_late": True}}, "time_limit: 'max_minutes' is required"),
    ],
)
def test_outcome_fields_are_checked_with_their_paths(demo_spec, changes, problem):
    with pytest.raises(InvalidStudyFile) as error:
        validate_study({**demo_spec, **changes})
    assert problem in str(error.value)


def test_a_format_2_file_gives_each_outcome_its_own_code_too():
    spec = json.loads(EXAMPLE.read_text())
    spec["prolific"] = {"completion_codes": {"completed": "SAME2", "failed_attention": "SAME2"}}
    with pytest.raises(InvalidStudyFile, match="'SAME2' is the code of more than one outcome"):
        validate_study(spec)


def test_outcome_and_review_follow_the_threshold(demo_spec):
    spec = stored_file(demo_spec)[0]  # as stored: converted; three checks, return_if_failed defaults to 2
    assert [outcome_of(spec, "completed", n) for n in range(4)] == ["completed"] * 2 + ["failed_attention"] * 2
    assert outcome_of(spec, "screened_out", 0) == "screened_out"
    assert review(spec, "completed", 1, 3) == Review("approve", "completed")
    assert review(spec, "completed", 2, 3) == Review("reject", "failed attention checks 2 of 3")
    assert review(spec, "timed_out", 0, 1) == Review("return", "timed out")
    assert review(spec, "screened_out", 0, 0) == Review("return", "screened out")
    assert review(spec, "declined", 0, 0) == Review("return", "declined consent")
    assert review(spec, "active", 0, 0) is None and review(spec, "withdrawn", 0, 0) is None


def _arrive_by_label(client, label: str):
    """Open the study's plain link (``participant_label``, not Prolific's) and consent."""
    from participation.models import Participant

    client.get("/s/effort-demo/", {"participant_label": label})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    return Participant.objects.get(external_id=label)


def test_a_participant_who_did_not_come_from_prolific_gets_a_plain_end_page(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    text = _text(finish(client, _arrive_by_label(client, "lab-1")))
    assert "Thank you, your answers are saved" in text and 'id="completion-code">COMP1<' in text
    assert "Prolific" not in text and "completion-link" not in text and "http-equiv" not in text
    assert "You can close this page now." in text


def test_failed_attention_without_prolific_says_nothing_of_prolific(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    text = _text(finish(client, _arrive_by_label(client, "lab-2"), failed_checks=2))
    assert "did not pass the attention checks" in text and "Prolific" not in text
    assert "FAIL1" not in text and "completion-link" not in text
    assert _text(client.get("/s/effort-demo/done/")) == text  # a reload: the same page, from the session


def test_the_study_files_own_completion_link_stays_for_everyone(client, demo_spec, researcher):
    own = {"code": "OWN1", "url": "https://survey.example.org/finished"}
    load_variant(demo_spec, researcher, completion=own)
    text = _text(finish(client, _arrive_by_label(client, "lab-3")))
    assert 'href="https://survey.example.org/finished"' in text and "Prolific" not in text
    client.cookies.clear()
    text = _text(finish(client, arrive(client, "p-own")))  # from Prolific, but the link is the study's own
    assert 'href="https://survey.example.org/finished"' in text and "Return to Prolific" not in text


def _decline(client, **link) -> str:
    client.get("/s/effort-demo/", link)
    response = client.post("/s/effort-demo/consent/", {"decision": "decline"}, follow=True)
    assert response.redirect_chain[-1][0] == "/s/effort-demo/declined/"
    return _text(response)


def test_declining_from_prolific_gets_the_declined_code_and_the_link_back(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    text = _decline(client, PROLIFIC_PID="p-no", STUDY_ID="ST1", SESSION_ID="S-no")
    assert "You chose not to take part" in text and 'id="completion-code">DECL1<' in text
    assert f'href="{PROLIFIC}DECL1"' in text and "Go to Prolific" in text
    assert "http-equiv" not in text and "COMP1" not in text  # the message is read, not skipped by a redirect
    assert _text(client.get("/s/effort-demo/declined/")) == text


def test_declining_without_prolific_or_without_its_code_shows_the_message_alone(client, demo_spec, researcher):
    load_variant(demo_spec, researcher, prolific={"completion_codes": CODES})
    plain = _decline(client, participant_label="lab-no")
    assert "You chose not to take part" in plain and "Prolific" not in plain
    assert "DECL1" not in plain and "completion-code" not in plain and "completion-link" not in plain
    client.cookies.clear()
    load_variant(demo_spec, researcher, prolific={"completion_codes": {"completed": "COMP1"}})
    uncoded = _decline(client, PROLIFIC_PID="p-no2", STUDY_ID="ST1", SESSION_ID="S-no2")
    assert "You chose not to take part" in uncoded and "completion-code" not in uncoded
    assert "completion-link" not in uncoded
