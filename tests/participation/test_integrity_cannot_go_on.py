"""``check_integrity`` lists the participants who cannot go on: it renders every active participant's current
page as the page view does, in a transaction it rolls back, and reports those whose page fails, with the
error (before: a participant stuck at a failing adaptive decision passed the check)."""

import math

import pytest
from django.core.management import CommandError, call_command

from tests.participation.test_adaptive import ANSWER, _run_refits, adaptive_spec
from tests.tasks import reach_task_page


def _stored(study) -> tuple:
    from participation.models import AdaptiveDecision, AdaptiveStripe, Answer, PageVisit

    return (
        list(AdaptiveDecision.objects.filter(study=study).order_by("pk").values_list("pk", "item")),
        sorted(AdaptiveStripe.objects.filter(study=study).values_list("stripe", "decisions", "pending")),
        Answer.objects.filter(participant__study=study).count(),
        PageVisit.objects.filter(participant__study=study).count(),
    )


@pytest.mark.django_db
def test_a_participant_whose_page_fails_is_listed_and_nothing_changes(
    client, researcher, monkeypatch, django_capture_on_commit_callbacks
):
    """Under a fit, a decision whose score is infinite cannot be stored (PostgreSQL refuses the JSON, the
    strict encoder refuses it on SQLite): the participant who reaches that slot gets a 500, and the check lists
    them with the error, while a participant on an ordinary page is not listed; the check stores nothing
    (decisions, stripes, answers, visits as before). Once decisions can be stored again the same participant's
    page renders, their slot is decided only in the rolled-back check, and the check is clean."""
    from django.test import Client

    from participation.integrity import check_integrity
    from participation.models import AdaptiveDecision, Participant
    from participation.simulate import simulate_participants
    from studies.services import study_load

    spec = adaptive_spec(refit_every=10)
    study = study_load(spec=spec, owner=researcher).study
    with django_capture_on_commit_callbacks(execute=True):
        simulate_participants("choose-loan", n=3, seed=1, decline_rate=0)
    assert _run_refits(study)
    stuck, page = reach_task_page(client, spec, "choose", label="stuck")  # slot 0 decided under the fit
    waiting = Client()
    waiting.get("/s/choose-loan/?participant_label=waiting")
    waiting.post("/s/choose-loan/consent/", {"decision": "accept"})  # on the study's first page
    monkeypatch.setattr("analysis.adaptive_design.item_score", lambda *args: math.inf)
    client.raise_request_exception = False
    assert client.post("/s/choose-loan/page/", {"page_key": page["key"], **ANSWER}).status_code == 500
    stuck.refresh_from_db()
    assert stuck.plan[stuck.position]["key"] == "loan/#1"  # slot 0 saved, slot 1 never decided
    assert client.get("/s/choose-loan/page/").status_code == 500  # and every retry fails the same way
    before = _stored(study)

    report = check_integrity("choose-loan")
    assert not report.ok and len(report.cannot_go_on) == 1, str(report)
    line = report.cannot_go_on[0]
    assert line.startswith(f"{stuck.pseudonym} (loan/#1): ")
    assert "NonFiniteJSON" in line or "invalid input syntax for type json" in line, line
    assert str(Participant.objects.get(external_id="waiting").pseudonym) not in str(report)
    assert _stored(study) == before
    with pytest.raises(CommandError, match="integrity check failed"):
        call_command("check_integrity", "choose-loan")

    monkeypatch.undo()
    report = check_integrity("choose-loan")
    assert report.ok and not report.cannot_go_on, str(report)
    assert _stored(study) == before  # the slot decided during the check was rolled back
    assert not AdaptiveDecision.objects.filter(participant=stuck, slot=1).exists()
    assert client.get("/s/choose-loan/page/").status_code == 200
    assert AdaptiveDecision.objects.filter(participant=stuck, slot=1).exists()


@pytest.mark.django_db
def test_pages_that_would_make_a_blocks_first_decisions_render_and_leave_nothing(researcher, monkeypatch):
    """The adaptive block first: two consented participants (one stripe) stand at slots no one has decided
    yet, so the block has no state or stripe rows. Each page renders in its own rolled-back transaction, the
    second after the first's rows are gone (the process forgets them: it does not take them for existing), so
    neither is listed, and no decision, state or stripe row is left."""
    from participation.integrity import check_integrity
    from participation.models import AdaptiveDecision, AdaptiveState, AdaptiveStripe
    from participation.services import participant_arrive, participant_consent
    from studies.services import study_load

    monkeypatch.setattr("participation.adaptive.STRIPES", 1)
    spec = adaptive_spec()
    spec["blocks"] = spec["blocks"][-1:] + spec["blocks"][:-1]
    study = study_load(spec=spec, owner=researcher).study
    for i in range(2):
        participant, _ = participant_arrive(study_slug="choose-loan", external_id=f"first{i}", seed=i)
        participant = participant_consent(participant_id=participant.pk, accept=True)
        assert participant.plan[0]["key"] == "loan/#0"
    report = check_integrity("choose-loan")
    assert report.ok and not report.cannot_go_on, str(report)
    assert not AdaptiveDecision.objects.filter(study=study).exists()
    assert not AdaptiveState.objects.filter(study=study).exists()
    assert not AdaptiveStripe.objects.filter(study=study).exists()
