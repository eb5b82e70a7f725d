"""A participant id alone is not a credential: a known id continues only in the browser that
started, with Prolific's SESSION_ID of the same attempt, or with the participant's resume code;
wrong codes and new arrivals are limited; look-alike ids are one person."""

import re
from datetime import timedelta

import pytest
from django.db.models import F
from django.test import Client

from participation.models import Answer, ConflictingArrival, Participant, ResumeFailures
from participation.services import RESUME_CLIENTS_BEFORE_LOCK, clean_resume_code
from tests.surveys.helpers import answer_pages, participant_session

pytestmark = pytest.mark.django_db

START = "/s/effort-demo/"


def begin(client: Client, pid: str = "victim", session_id: str = "SE1") -> Participant:
    client.get(START, {"PROLIFIC_PID": pid, "STUDY_ID": "ST1", "SESSION_ID": session_id})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    return Participant.objects.get(external_id=pid)


def shown_code(client: Client) -> str:
    body = client.get("/s/effort-demo/page/").content.decode()
    match = re.search(r'id="resume-code">.*?<strong>([A-Z0-9-]+)</strong>', body)
    assert match, "the study page shows the resume code"
    return match.group(1)


def test_known_id_in_another_browser_cannot_continue_answer_or_withdraw(client, demo_study):
    participant = answer_pages(begin(client), 4)
    stranger = Client()
    response = stranger.get(START, {"PROLIFIC_PID": "victim"})
    assert response.status_code == 200 and b"Resume code" in response.content  # asked for the code
    assert "participant:effort-demo" not in participant_session(stranger)
    assert stranger.get("/s/effort-demo/page/").status_code == 403
    assert stranger.post("/s/effort-demo/withdraw/", {"confirm": "withdraw"}).status_code == 403
    # A different Prolific session id of the same person is not the attempt's: still the form.
    response = stranger.get(START, {"PROLIFIC_PID": "victim", "STUDY_ID": "ST1", "SESSION_ID": "other"})
    assert response.status_code == 200 and b"Resume code" in response.content
    participant.refresh_from_db()
    assert participant.status == "active" and participant.position == 4
    assert Answer.objects.filter(participant=participant).exists()
    # The browser that started keeps going.
    assert start_again(client).status_code == 302


def start_again(client: Client, **extra):
    return client.get(START, {"PROLIFIC_PID": "victim", **extra})


def test_prolific_session_id_of_the_attempt_resumes_on_another_device(client, demo_study):
    participant = answer_pages(begin(client), 5)
    phone = Client()
    response = phone.get(START, {"PROLIFIC_PID": "victim", "STUDY_ID": "ST1", "SESSION_ID": "SE1"})
    assert response["Location"] == "/s/effort-demo/page/"
    assert f"Page 6 of {len(participant.plan)}".encode() in phone.get("/s/effort-demo/page/").content


def test_resume_code_is_shown_hashed_and_resumes_on_another_device(client, demo_study):
    participant = answer_pages(begin(client), 3)
    code = shown_code(client)
    participant.refresh_from_db()
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", code)
    assert code not in participant.resume_code_hash and code.replace("-", "") not in participant.resume_code_hash
    other = Client()
    form = other.get(START, {"participant_label": "victim"})
    assert b'name="code"' in form.content
    typed = code.lower().replace("-", " ")  # case, spaces and dashes do not matter
    response = other.post(START, {"participant_label": "victim", "code": typed})
    assert response.status_code == 302 and response["Location"] == "/s/effort-demo/page/"
    assert f"Page 4 of {len(participant.plan)}".encode() in other.get("/s/effort-demo/page/").content
    assert shown_code(other) == code


def test_wrong_resume_codes_are_limited_per_participant(client, demo_study, settings):
    settings.PARTICIPANT_RESUME_MAX_FAILURES = 3
    participant = begin(client)
    code = shown_code(client)
    attacker = Client()
    for _ in range(3):
        assert attacker.post(START, {"participant_label": "victim", "code": "AAAA-AAAA"}).status_code == 422
    locked = attacker.post(START, {"participant_label": "victim", "code": code})  # even the right one
    assert locked.status_code == 429 and "participant:effort-demo" not in participant_session(attacker)
    # The lock ends after PARTICIPANT_RESUME_LOCK_SECONDS; a right code then works and resets the count.
    lock = timedelta(seconds=settings.PARTICIPANT_RESUME_LOCK_SECONDS + 1)
    Participant.objects.filter(pk=participant.pk).update(resume_failed_at=F("resume_failed_at") - lock)
    ResumeFailures.objects.filter(participant=participant).update(failed_at=F("failed_at") - lock)
    assert attacker.post(START, {"participant_label": "victim", "code": code}).status_code == 302
    participant.refresh_from_db()
    assert participant.resume_failures == 0 and not ResumeFailures.objects.exists()


def test_a_strangers_wrong_codes_lock_the_stranger_out_not_the_owner(client, demo_study, settings):
    """Wrong codes are bounded per client and participant: a stranger who typed too many is locked out of
    the code (even the right one), while the owner on another network still resumes; only wrong codes
    from RESUME_CLIENTS_BEFORE_LOCK clients' worth lock the code for everyone. Before, the stranger's 5
    guesses locked the owner out for 15 minutes."""
    settings.PARTICIPANT_RESUME_MAX_FAILURES = 3
    begin(client)
    code = shown_code(client)
    stranger = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(3):
        assert stranger.post(START, {"participant_label": "victim", "code": "AAAA-AAAA"}).status_code == 422
    assert stranger.post(START, {"participant_label": "victim", "code": code}).status_code == 429
    owner = Client(REMOTE_ADDR="198.51.100.7")  # the owner's phone
    assert owner.post(START, {"participant_label": "victim", "code": code}).status_code == 302
    assert "participant:effort-demo" in participant_session(owner)
    assert stranger.post(START, {"participant_label": "victim", "code": code}).status_code == 429  # still locked
    # Guesses spread over many networks: the code locks for everyone after that many clients' worth.
    settings.PARTICIPANT_RESUME_MAX_FAILURES = 1
    for i in range(RESUME_CLIENTS_BEFORE_LOCK):
        guesser = Client(REMOTE_ADDR=f"192.0.2.{i + 1}")
        assert guesser.post(START, {"participant_label": "victim", "code": "AAAA-AAAA"}).status_code == 422
    laptop = Client(REMOTE_ADDR="198.51.100.8")  # the owner on a third device
    assert laptop.post(START, {"participant_label": "victim", "code": code}).status_code == 429


def test_wrong_resume_codes_are_limited_per_address(demo_study, settings):
    settings.PARTICIPANT_RESUME_FAILURES_PER_ADDRESS = 2
    for pid in ("a1", "a2", "a3"):
        begin(Client(), pid)
    attacker = Client()
    assert attacker.post(START, {"participant_label": "a1", "code": "AAAA-AAAA"}).status_code == 422
    assert attacker.post(START, {"participant_label": "a2", "code": "AAAA-AAAA"}).status_code == 422
    assert attacker.post(START, {"participant_label": "a3", "code": "AAAA-AAAA"}).status_code == 429
    elsewhere = Client(REMOTE_ADDR="203.0.113.9")
    assert elsewhere.post(START, {"participant_label": "a3", "code": "AAAA-AAAA"}).status_code == 422


def test_new_arrivals_are_limited_per_address(demo_study, settings):
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 3
    crowd = Client()
    for i in range(3):
        assert crowd.get(START, {"PROLIFIC_PID": f"n{i}"}).status_code == 200  # the consent page
    refused = crowd.get(START, {"PROLIFIC_PID": "n3"})
    assert refused.status_code == 429 and refused["Retry-After"]
    assert not Participant.objects.filter(external_id="n3").exists()
    assert crowd.get(START, {"PROLIFIC_PID": "n2"}).status_code == 302  # returning: not counted
    assert Client(REMOTE_ADDR="198.51.100.7").get(START, {"PROLIFIC_PID": "n3"}).status_code == 200
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 0  # switched off (bench/launch.py)
    assert crowd.get(START, {"PROLIFIC_PID": "n4"}).status_code == 200


def test_address_behind_a_proxy_comes_from_the_configured_header(demo_study, settings):
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 1
    settings.PARTICIPANT_ADDRESS_HEADER = "X-Forwarded-For"
    proxy = Client()
    first = proxy.get(START, {"PROLIFIC_PID": "p1"}, HTTP_X_FORWARDED_FOR="1.2.3.4, 192.0.2.1")
    second = proxy.get(START, {"PROLIFIC_PID": "p2"}, HTTP_X_FORWARDED_FOR="192.0.2.2")
    third = proxy.get(START, {"PROLIFIC_PID": "p3"}, HTTP_X_FORWARDED_FOR="9.9.9.9, 192.0.2.1")
    assert (first.status_code, second.status_code, third.status_code) == (200, 200, 429)


def test_look_alike_ids_are_one_person_and_control_characters_are_refused(client, demo_study):
    begin(client, "PID123")
    same = Client()
    response = same.get(START, {"PROLIFIC_PID": " ＰＩＤ１２３ ", "STUDY_ID": "ST1", "SESSION_ID": "SE1"})
    assert response["Location"] == "/s/effort-demo/page/" and Participant.objects.count() == 1
    assert Client().get(START, {"PROLIFIC_PID": "ＰＩＤ１２３"}).status_code == 200  # the resume form
    for bad in ("PID\u200b123", "PID\x00123", "PID\u202e123"):
        response = Client().get(START, {"PROLIFIC_PID": bad})
        assert response.status_code == 400, bad
    assert Participant.objects.count() == 1


def test_completed_participant_elsewhere_needs_the_attempt_or_the_code(client, demo_study):
    participant = begin(client)
    code = shown_code(client)
    answer_pages(participant)
    stranger = Client()
    form = stranger.get(START, {"PROLIFIC_PID": "victim"})
    assert form.status_code == 200 and demo_study.spec["completion"]["code"].encode() not in form.content
    back = Client()
    assert back.get(START, {"PROLIFIC_PID": "victim", "SESSION_ID": "SE1"})["Location"] == "/s/effort-demo/done/"
    assert demo_study.spec["completion"]["code"].encode() in back.get("/s/effort-demo/done/").content
    assert "participant:effort-demo" not in participant_session(back)
    assert stranger.post(START, {"PROLIFIC_PID": "victim", "code": code})["Location"] == "/s/effort-demo/done/"


def test_clean_resume_code():
    assert clean_resume_code(" abcd efgh ") == "ABCD-EFGH" == clean_resume_code("ABCD-EFGH")
    assert clean_resume_code("ＡＢＣＤ－ＥＦＧＨ") == "ABCD-EFGH"


def test_a_device_bound_by_session_id_keeps_the_first_browsers_code_valid(client, demo_study):
    """Opening the Prolific link twice on a phone must not replace the code the laptop shows."""
    from participation.services import ResumeOutcome, participant_resume

    participant = answer_pages(begin(client), 3)
    laptop_code = shown_code(client)
    phone = Client()
    for _ in range(2):
        phone.get(START, {"PROLIFIC_PID": "victim", "STUDY_ID": "ST1", "SESSION_ID": "SE1"})
    assert shown_code(client) == laptop_code
    outcome = participant_resume(participant_id=participant.pk, code=clean_resume_code(laptop_code), client="x")
    assert outcome is ResumeOutcome.ACCEPTED


def test_the_cached_consent_page_equals_a_fresh_render_with_each_visitors_token_and_code(demo_study):
    from django.template.loader import render_to_string
    from django.utils.safestring import mark_safe

    from participation.rendering import resume_html

    pages = []
    for pid in ("first", "second"):
        browser = Client()
        browser.get(START, {"PROLIFIC_PID": pid, "STUDY_ID": "ST1", "SESSION_ID": pid})
        html = browser.get("/s/effort-demo/consent/").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
        code = re.search(r'id="resume-code">.*?<strong>([A-Z0-9-]+)</strong>', html).group(1)
        context = {"spec": demo_study.spec, "resume_html": mark_safe(resume_html(code)), "csrf_token": token}
        context["records_signals"] = True  # the demo records interaction signals (the default)
        assert html == render_to_string("surveys/consent.html", context)
        pages.append((token, code))
        assert browser.post("/s/effort-demo/consent/", {"decision": "accept"}).status_code == 302
    assert pages[0][0] != pages[1][0] and pages[0][1] != pages[1][1]


def test_ipv6_addresses_of_one_64_share_the_per_address_limits(demo_study, settings):
    settings.PARTICIPANT_ARRIVALS_PER_ADDRESS = 2
    settings.PARTICIPANT_RESUME_FAILURES_PER_ADDRESS = 1
    for i in range(2):
        assert Client(REMOTE_ADDR=f"2001:db8:1:2::{i + 1}").get(START, {"PROLIFIC_PID": f"v{i}"}).status_code == 200
    # another host of the same /64 (long, zero-padded and IPv4-mapped spellings are normalised)
    refused = Client(REMOTE_ADDR="2001:0db8:0001:0002:ffff:ffff:ffff:ffff").get(START, {"PROLIFIC_PID": "v2"})
    assert refused.status_code == 429
    assert Client(REMOTE_ADDR="2001:db8:1:3::1").get(START, {"PROLIFIC_PID": "v2"}).status_code == 200  # next /64
    assert Client(REMOTE_ADDR="::ffff:198.51.100.7").get(START, {"PROLIFIC_PID": "v3"}).status_code == 200
    assert Client(REMOTE_ADDR="198.51.100.7").get(START, {"PROLIFIC_PID": "v4"}).status_code == 200
    assert Client(REMOTE_ADDR="198.51.100.7").get(START, {"PROLIFIC_PID": "v5"}).status_code == 429  # one IPv4 address
    wrong = {"participant_label": "v0", "code": "AAAA-AAAA"}
    assert Client(REMOTE_ADDR="2001:db8:9:9::1").post(START, wrong).status_code == 422
    assert Client(REMOTE_ADDR="2001:db8:9:9::2").post(START, wrong).status_code == 429


def test_a_start_parameter_with_a_nul_or_invisible_character_is_refused_and_nothing_is_stored(client, demo_study):
    """A NUL in SESSION_ID answered 500 (PostgreSQL stores no NUL): every parameter the link carries is
    refused with a 400 naming it, before anything is stored; the typed resume code is cleaned instead."""
    participant = begin(client)
    code = shown_code(client)
    link = {"STUDY_ID": "ST1", "SESSION_ID": "SE2"}
    bad = {"SESSION_ID": "SE\x002", "STUDY_ID": "ST\x001", "lang": "de\x00", "pilot": "\x00", "PROLIFIC_PID": "n\x00"}
    for name, value in bad.items():
        for pid in ("newcomer", "victim"):  # a new arrival, a known participant elsewhere
            response = Client().get(START, {**link, "PROLIFIC_PID": pid, name: value})
            assert response.status_code == 400, (name, pid)
            assert f"The link&#x27;s {name} contains control or invisible characters." in response.content.decode()
        resuming = Client()
        assert resuming.post(START, {"participant_label": "victim", "code": code, name: value}).status_code == 400
        assert "participant:effort-demo" not in participant_session(resuming)
    assert Client().get(START, {**link, "PROLIFIC_PID": "newcomer", "SESSION_ID": "SE\u200b2"}).status_code == 400
    assert list(Participant.objects.values_list("external_id", flat=True)) == ["victim"]
    assert not ConflictingArrival.objects.exists()
    participant.refresh_from_db()
    assert (participant.prolific_session_id, participant.resume_failures) == ("SE1", 0)
    # A parameter the link does not read is ignored; a NUL typed or pasted into the resume form is cleaned away.
    assert Client().get(START, {**link, "PROLIFIC_PID": "newcomer", "utm": "\x00"}).status_code == 200
    typed = Client()
    assert typed.post(START, {"participant_label": "victim", "code": code[:2] + "\x00" + code[2:]}).status_code == 302
