"""The fast page path: cached blank pages, the next page as the answer to a POST, plain SQL."""

import re

import pytest
from django.db import IntegrityError, connection, transaction
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext

from participation.models import Answer, PageVisit, Participant
from participation.pages import condition_index, page_context, page_form
from participation.rendering import resume_html
from participation.sql import execute_together, insert_rows, insert_statement, update_rows, update_statement
from studies.study_facts import study_facts
from tests.surveys.helpers import answer_pages, consented, participant_session, valid_data

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def fresh_render(page: dict, index, position: int, total: int, resume: str = "") -> str:
    ctx = page_context(page, index)
    template = ctx.pop("template")
    ctx.update(
        form=page_form(page, index),
        page=page,
        spec=index.spec,
        position=position + 1,
        total=total,
        progress=round(100 * position / total),
        csrf_token="t",
        resume_html=resume,
    )
    return render_to_string(template, ctx)


@pytest.mark.slow
def test_every_cached_page_equals_a_fresh_render(client, demo_study):
    """Two participants (different orders) see, on every page, exactly what the template renders."""
    for pid in ("order-a", "order-b"):
        client.get("/s/effort-demo/", {"PROLIFIC_PID": pid})
        client.post("/s/effort-demo/consent/", {"decision": "accept"})
        participant = Participant.objects.get(external_id=pid)
        resume = resume_html(participant_session(client)["resume:effort-demo"])
        assert resume
        index = condition_index(demo_study.spec, demo_study.spec_hash, participant.condition.key)
        for position, page in enumerate(participant.plan):
            served = client.get("/s/effort-demo/page/")
            assert served.status_code == 200
            body = TOKEN.sub("T", served.content.decode())
            assert body == TOKEN.sub("T", fresh_render(page, index, position, len(participant.plan), resume))
            answer_pages(participant, 1)


def test_a_saved_page_answers_with_the_next_page(client, demo_study):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "fast"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    participant = Participant.objects.get()
    index = condition_index(demo_study.spec, demo_study.spec_hash, participant.condition.key)
    for position, page in enumerate(participant.plan[:-1]):
        response = client.post("/s/effort-demo/page/", {"page_key": page["key"], **valid_data(page, index)})
        following = participant.plan[position + 1]
        assert response.status_code == 200
        assert f'name="page_key" value="{following["key"]}"'.encode() in response.content
        assert f"Page {position + 2} of {len(participant.plan)}".encode() in response.content
        assert b"surveys/page.js" in response.content  # makes a reload a GET
    # the next page was recorded as shown when it was sent; a reload shows it again, writes nothing
    assert PageVisit.objects.filter(participant=participant, submitted_at__isnull=True).count() == 1
    reload = client.get("/s/effort-demo/page/")
    assert f'value="{participant.plan[-1]["key"]}"'.encode() in reload.content
    assert PageVisit.objects.filter(participant=participant).count() == len(participant.plan)
    last = participant.plan[-1]
    done = client.post("/s/effort-demo/page/", {"page_key": last["key"], **valid_data(last, index)})
    assert done.status_code == 302 and done["Location"] == "/s/effort-demo/done/"
    participant.refresh_from_db()
    assert participant.status == "completed"
    assert (
        Answer.objects.filter(participant=participant).values("page").distinct().count() >= len(participant.plan) - 1
    )  # every page but the instructions has answers


def test_resent_form_after_the_next_page_saves_nothing(client, demo_study):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "resend"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    participant = Participant.objects.get()
    client.post("/s/effort-demo/page/", {"page_key": "instructions"})
    page = participant.plan[1]
    index = condition_index(demo_study.spec, demo_study.spec_hash, participant.condition.key)
    data = {"page_key": page["key"], **valid_data(page, index)}
    assert client.post("/s/effort-demo/page/", data).status_code == 200
    count = Answer.objects.filter(participant=participant).count()
    again = client.post("/s/effort-demo/page/", data)  # reload without page.js: the browser resends
    assert again.status_code == 302 and again["Location"] == "/s/effort-demo/page/"
    assert Answer.objects.filter(participant=participant).count() == count


def test_another_participants_page_key_is_not_saved(client, demo_study):
    other = consented("effort-demo", "other")
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "me"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    me = Participant.objects.get(external_id="me")
    later = next(p for p in me.plan[3:] if p["kind"] == "pair_distance")
    index = condition_index(demo_study.spec, demo_study.spec_hash, me.condition.key)
    response = client.post("/s/effort-demo/page/", {"page_key": later["key"], **valid_data(later, index)})
    assert response.status_code == 302  # not reached yet: sent back to the current page
    assert not Answer.objects.exists() and not Answer.objects.filter(participant=other).exists()


def test_plain_sql_helpers_match_the_orm(demo_study):
    for i in range(5):
        consented("effort-demo", f"n{i}")
    first, second = Participant.objects.all()[:2]
    # a tuple in ``where`` is IN (..): the same rows as the ORM's __in
    assert update_rows(Participant, {"seed": 7}, {"study": demo_study.pk, "status": ("completed", "declined")}) == 0
    assert update_rows(Participant, {"seed": 7}, {"id": (first.pk, second.pk), "status": ("active", "completed")}) == 2
    assert set(Participant.objects.filter(seed=7).values_list("pk", flat=True)) == {first.pk, second.pk}
    participant = Participant.objects.first()
    assert update_rows(Participant, {"position": 3}, {"id": participant.pk, "position": 99}) == 0
    assert update_rows(Participant, {"position": 3}, {"id": participant.pk, "position": 0}) == 1
    shown = participant.consented_at
    insert_rows(PageVisit, ("participant", "page", "first_shown_at", "refusals"), [(participant.pk, "p", shown, 0)])
    later = shown.replace(year=shown.year + 1)
    insert_rows(
        PageVisit,
        ("participant", "page", "first_shown_at", "submitted_at", "refusals"),
        [(participant.pk, "p", later, later, 0)],
        on_conflict=("participant", "page"),
        update=("submitted_at",),
    )
    visit = PageVisit.objects.get(participant=participant, page="p")
    assert (visit.first_shown_at, visit.submitted_at) == (shown, later)  # only submitted_at changed
    participant.refresh_from_db()
    assert participant.position == 3
    # several statements at once: in order, one query on PostgreSQL, and an error in any of them raised
    with CaptureQueriesContext(connection) as queries:
        execute_together(
            [
                update_statement(Participant, {"position": 4}, {"id": participant.pk}),
                insert_statement(
                    PageVisit, ("participant", "page", "first_shown_at", "refusals"), [(participant.pk, "q", shown, 2)]
                ),
                update_statement(PageVisit, {"refusals": 5}, {"participant": participant.pk, "page": "q"}),
            ]
        )
    assert len(queries) == (1 if connection.vendor == "postgresql" else 3)
    participant.refresh_from_db()
    assert participant.position == 4 and PageVisit.objects.get(participant=participant, page="q").refusals == 5
    again = insert_statement(
        PageVisit, ("participant", "page", "first_shown_at", "refusals"), [(participant.pk, "q", shown, 0)]
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        execute_together([update_statement(Participant, {"position": 6}, {"id": participant.pk}), again])
    participant.refresh_from_db()
    assert participant.position == 4  # rolled back with the failed insert


def test_study_facts_are_read_again_after_an_edit_in_place(demo_spec, demo_study):
    from studies.services import study_load

    first = consented("effort-demo", "first")
    facts = study_facts(demo_study.pk, first.condition_id)
    assert facts.spec["title"] == demo_spec["title"]
    first.delete()  # a researcher removes the only (test) participant, then edits the file
    edited = dict(demo_spec, title="Edited title")
    assert study_load(spec=edited).action == "replaced"
    newcomer = consented("effort-demo", "newcomer")
    assert study_facts(demo_study.pk, newcomer.condition_id).spec["title"] == "Edited title"


def test_a_participant_removed_mid_study_gets_the_link_advice_not_an_error(client, demo_study):
    client.get("/s/effort-demo/", {"PROLIFIC_PID": "removed"})
    client.post("/s/effort-demo/consent/", {"decision": "accept"})
    assert client.post("/s/effort-demo/page/", {"page_key": "instructions"}).status_code == 200  # plan cached
    participant = Participant.objects.get()
    page = participant.plan[1]
    index = condition_index(demo_study.spec, demo_study.spec_hash, participant.condition.key)
    participant.delete()
    response = client.post("/s/effort-demo/page/", {"page_key": page["key"], **valid_data(page, index)})
    assert response.status_code == 403 and b"Open the study from the link" in response.content
    assert not Answer.objects.exists()
