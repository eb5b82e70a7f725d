"""The participant's and researcher's pages through Django's test client."""

import pytest
from django.test import Client

from participation.models import Answer, Participant
from tests.surveys.helpers import answer_pages, output_page, participant_session

pytestmark = pytest.mark.django_db


def start(client: Client, pid: str = "PID123"):
    return client.get("/s/effort-demo/", {"PROLIFIC_PID": pid, "STUDY_ID": "ST1", "SESSION_ID": "SE1"})


def accept(client: Client):
    return client.post("/s/effort-demo/consent/", {"decision": "accept"})


def test_start_stores_prolific_ids_and_asks_for_consent(client, demo_study):
    response = start(client)  # answered with the consent page, whose form posts to /consent/
    assert response.status_code == 200 and b'<form method="post" action="/s/effort-demo/consent/">' in response.content
    again = start(client)  # the same link again in the same browser: where the participant stands
    assert again.status_code == 302 and again["Location"] == "/s/effort-demo/consent/"
    participant = Participant.objects.get()
    assert (participant.external_id, participant.prolific_study_id, participant.prolific_session_id) == (
        "PID123",
        "ST1",
        "SE1",
    )


def test_generic_participant_label_is_accepted(client, demo_study):
    assert client.get("/s/effort-demo/", {"participant_label": "lab-7"}).status_code == 200
    assert Participant.objects.get().external_id == "lab-7"


def test_link_without_id_gets_a_specific_message(client, demo_study):
    response = client.get("/s/effort-demo/")
    assert response.status_code == 400 and b"no participant id" in response.content


def test_unknown_study_is_404(client, db):
    assert client.get("/s/nope/", {"PROLIFIC_PID": "x"}).status_code == 404


def test_declining_ends_politely(client, demo_study):
    start(client)
    response = client.post("/s/effort-demo/consent/", {"decision": "decline"}, follow=True)
    assert b"You chose not to take part" in response.content
    assert client.get("/s/effort-demo/page/").status_code == 302


def test_page_without_session_is_refused_with_advice(client, demo_study):
    response = client.get("/s/effort-demo/page/")
    assert response.status_code == 403 and b"Open the study from the link" in response.content


def test_pair_page_shows_chart_data_and_plotly_from_static(client, demo_study):
    start(client)
    accept(client)
    client.post("/s/effort-demo/page/", {"page_key": "instructions"})
    participant = Participant.objects.get()
    response = client.get("/s/effort-demo/page/")
    page = participant.plan[1]
    assert page["kind"] in ("pair_distance", "attention")
    body = response.content.decode()
    assert "/static/vendor/plotly.min.js" in body and "cdn" not in body.lower()
    assert 'role="img"' in body and '<progress id="progress"' in body
    assert "Page 2 of" in body


def at_first_output_page(client, *, rationale: str):
    """A new participant answered up to the first output page; that page and valid answers to it
    (accept the AI's score for K, score 45 and ``rationale.format(subject)`` per comparison)."""
    start(client)
    accept(client)
    participant = Participant.objects.get()
    answer_pages(participant, next(i for i, p in enumerate(participant.plan) if p["key"].startswith("output/")))
    page = output_page(participant)
    data = {"page_key": page["key"], "k_decision": "accept"}
    for x in page["subjects"]:
        data[f"score_{x}"] = "45"
        data[f"rationale_{x}"] = rationale.format(x)
    return participant, page, data


def test_refused_page_keeps_other_inputs_and_names_the_problem(client, demo_study):
    participant, page, data = at_first_output_page(client, rationale="Reason for {} kept")
    data[f"score_{page['subjects'][0]}"] = "150"
    response = client.post("/s/effort-demo/page/", data)
    assert response.status_code == 422
    body = response.content.decode()
    assert "A risk score cannot be above 100" in body
    assert f"Reason for {page['subjects'][1]} kept" in body and 'value="45"' in body
    assert not Answer.objects.filter(participant=participant, page=page["key"]).exists()
    data[f"score_{page['subjects'][0]}"] = "55.5"
    following = client.post("/s/effort-demo/page/", data)
    assert following.status_code == 200  # the next page itself
    assert participant.plan[participant.position + 1]["key"].encode() in following.content
    saved = Answer.objects.get(participant=participant, question=f"output/{page['set']}/{page['subjects'][0]}/score")
    assert saved.number == pytest.approx(0.555)


def test_double_submit_stores_one_answer(client, demo_study):
    start(client)
    accept(client)
    client.post("/s/effort-demo/page/", {"page_key": "instructions"})
    participant = Participant.objects.get()
    page = participant.plan[1]
    data = {"page_key": page["key"], "rating": "3", "prediction": "50", "choice": "Blue"}
    if page["kind"] == "attention":
        data["choice"] = demo_study.format1_spec["attention_checks"]["items"][0]["correct"]
    first = client.post("/s/effort-demo/page/", data)
    second = client.post("/s/effort-demo/page/", data)
    assert first.status_code == 200 and page["key"].encode() not in first.content  # the next page
    assert second.status_code == 302 and second["Location"] == "/s/effort-demo/page/"  # a replay
    assert Answer.objects.filter(participant=participant, page=page["key"]).count() == 1


def test_resume_from_another_device_and_no_restart_after_completion(client, demo_study):
    start(client, "resumer")
    accept(client)
    participant = Participant.objects.get()
    answer_pages(participant, 5)
    other_device = Client()
    response = start(other_device, "resumer")
    assert response["Location"] == "/s/effort-demo/page/"
    assert f"Page 6 of {len(participant.plan)}".encode() in other_device.get("/s/effort-demo/page/").content
    answer_pages(participant)
    response = start(other_device, "resumer")
    assert response["Location"] == "/s/effort-demo/done/"
    done = other_device.get("/s/effort-demo/done/")
    assert demo_study.spec["completion"]["code"].encode() in done.content


def test_csrf_is_enforced(demo_study):
    client = Client(enforce_csrf_checks=True)
    start(client)
    assert client.post("/s/effort-demo/consent/", {"decision": "accept"}).status_code == 403


def test_researcher_pages_need_login_and_ownership(client, demo_study, other_researcher):
    assert client.get("/researcher/studies/effort-demo/").status_code == 302
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/effort-demo/").status_code == 404
    assert client.get("/researcher/studies/effort-demo/export/pairs.csv").status_code == 404
    assert b"effort-demo" not in client.get("/researcher/").content


def test_owner_sees_dashboard_and_downloads_exports(client, demo_study, researcher):
    participant = Participant.objects.none()
    from tests.surveys.helpers import consented

    participant = consented("effort-demo", "d1")
    answer_pages(participant)
    client.force_login(researcher)
    body = client.get("/researcher/studies/effort-demo/").content.decode()
    assert "Participants by condition and status" in body and "arrivals-figure" in body
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in body
    csv = client.get("/researcher/studies/effort-demo/export/pairs.csv")
    assert csv["Content-Type"].startswith("text/csv") and csv.content.count(b"\n") == 13


def test_shared_study_is_visible_to_collaborator(client, demo_study, other_researcher):
    demo_study.collaborators.add(other_researcher)
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/effort-demo/").status_code == 200


def test_health_endpoint(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def _post_last_page(client: Client, participant: Participant):
    from participation.pages import condition_index
    from tests.surveys.helpers import valid_data

    answer_pages(participant, len(participant.plan) - 1)
    page = participant.plan[-1]
    study = participant.study
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    return client.post("/s/effort-demo/page/", {"page_key": page["key"], **valid_data(page, index)})


def test_session_ends_at_completion_and_the_completion_page_stays_reachable(client, demo_study):
    start(client, "finisher")
    accept(client)
    participant = Participant.objects.get()
    response = _post_last_page(client, participant)
    assert response.status_code == 302 and response["Location"] == "/s/effort-demo/done/"
    participant.refresh_from_db()
    assert participant.status == "completed"
    # The browser no longer names the participant (the next person on a shared computer)...
    assert "participant:effort-demo" not in participant_session(client)
    assert participant.pk not in participant_session(client).values()
    assert participant_session(client).get_expiry_age() <= 3600
    # ... but the completion page is still there, and every other page leads to it.
    done = client.get("/s/effort-demo/done/")
    assert done.status_code == 200 and demo_study.spec["completion"]["code"].encode() in done.content
    assert client.get("/s/effort-demo/page/")["Location"] == "/s/effort-demo/done/"
    assert client.get("/s/effort-demo/withdraw/")["Location"] == "/s/effort-demo/done/"
    # Reopening their own link in this browser leads there too, not to the resume-code form.
    assert client.get("/s/effort-demo/", {"participant_label": "finisher"})["Location"] == "/s/effort-demo/done/"
    # A new person on the same browser starts as themselves.
    start(client, "next-person")
    assert (
        participant_session(client)["participant:effort-demo"] == Participant.objects.get(external_id="next-person").pk
    )
    assert (
        "ended:effort-demo" not in participant_session(client)
        and participant_session(client).get("_session_expiry") is None
    )
    assert client.get("/s/effort-demo/done/")["Location"] == "/s/effort-demo/consent/"


def test_session_ends_when_a_researcher_withdraws_the_participant(client, demo_study):
    from participation.services import participant_withdraw

    start(client, "removed-later")
    accept(client)
    participant_withdraw(participant_id=Participant.objects.get().pk)
    assert client.get("/s/effort-demo/page/")["Location"] == "/s/effort-demo/withdrawn/"
    assert "participant:effort-demo" not in participant_session(client)
    assert client.get("/s/effort-demo/withdrawn/").status_code == 200


def test_accepting_the_ai_score_ignores_the_score_box(client, demo_study):
    """'Accept the AI's score' disables the score box on the page (page.js), so the server ignores a number
    sent in it (a browser without JS): the AI's score is stored, as with the box disabled."""
    from participation.pages import condition_index

    participant, page, data = at_first_output_page(client, rationale="Reason for {}")
    data["k_score"] = "62"
    assert client.post("/s/effort-demo/page/", data).status_code == 200
    stored = {a.measure: a.number for a in Answer.objects.filter(participant=participant, page=page["key"])}
    index = condition_index(demo_study.spec, demo_study.spec_hash, participant.condition.key)
    reference = index.stimulus_set(page)["reference"]
    ai_score = index.model_output(index.block(page)["pool"], reference, "ai")["score"]
    assert stored["k_accept"] == 1 and stored["k_score"] == pytest.approx(ai_score) != 0.62


def test_the_fair_score_page_names_people_by_letter_and_draws_one_chart(client, demo_study):
    """No subject id on the page (the effort demo's K1, A1, ...): Person A is the reference, B, C, ... the
    comparisons, in the one chart of their series as on the cards and questions."""
    import html as html_module
    import json
    import re

    participant, page, _ = at_first_output_page(client, rationale="Reason for {}")
    body = html_module.unescape(client.get("/s/effort-demo/page/").content.decode())
    text = re.sub(r"<[^>]+>", " ", body)
    ids = {s for p in participant.plan if "item" in p for s in re.findall(r"[A-Z]\d+", p["item"])}
    ids |= set(page["subjects"])
    assert ids and not {i for i in ids if re.search(rf"\b{i}\b", text)}, "a subject id is shown"
    assert "Your risk score for Person A (0-100)" in text and "Fair risk score for Person B (0-100)" in text
    charts = re.findall(r'<script id="chart-data-[^"]+" type="application/json">(.*?)</script>', body)
    assert len(charts) == 1
    names = [trace["name"] for trace in json.loads(charts[0])["traces"]]
    assert names == [f"Person {letter}" for letter in "ABCDE"[: len(names)]] and len(names) == 1 + len(page["subjects"])
    assert "vendor/plotly.min.js" in body  # a page with a chart loads Plotly
