"""The dashboard's arrivals chart: a study no one has arrived at says so (no empty axes around the
year 2000), and a handful of arrivals gets a count axis from 0 in whole participants and a time axis
from the first arrival to now."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from participation.models import Participant
from participation.services import participant_arrive
from research.dashboard import arrivals_figure

pytestmark = pytest.mark.django_db


def _dashboard(user) -> str:
    client = Client()
    client.force_login(user)
    return client.get("/researcher/studies/effort-demo/").content.decode()


def test_an_empty_study_says_no_arrivals_yet(demo_study, researcher):
    body = _dashboard(researcher)
    assert 'id="no-arrivals"' in body and "No arrivals yet" in body
    assert 'data-figure="arrivals-figure"' not in body
    assert arrivals_figure(Participant.objects.filter(study__slug="effort-demo")) == ""


def test_a_few_arrivals_get_a_sensible_axis(demo_study, researcher):
    for n in range(3):
        participant_arrive(study_slug="effort-demo", external_id=f"p{n}")
    first = Participant.objects.order_by("arrived_at").first().arrived_at
    now = first + timedelta(minutes=5)
    figure = json.loads(arrivals_figure(Participant.objects.filter(study__slug="effort-demo"), now=now))
    yaxis, xaxis = figure["layout"]["yaxis"], figure["layout"]["xaxis"]
    assert yaxis["rangemode"] == "tozero" and yaxis["range"] == [0, 3.5] and yaxis["dtick"] == 1
    assert {trace["mode"] for trace in figure["data"]} == {"lines+markers"}
    start, end = (datetime.fromisoformat(v) for v in xaxis["range"])
    assert start == first and end == first + timedelta(hours=1)  # at least an hour, from the first arrival
    later = first + timedelta(days=2)
    figure = json.loads(arrivals_figure(Participant.objects.filter(study__slug="effort-demo"), now=later))
    assert datetime.fromisoformat(figure["layout"]["xaxis"]["range"][1]) == later
    assert 'data-figure="arrivals-figure"' in _dashboard(researcher) and "No arrivals yet" not in _dashboard(researcher)


def test_many_arrivals_leave_the_ticks_to_plotly(demo_study):
    for n in range(12):
        participant_arrive(study_slug="effort-demo", external_id=f"p{n}")
    now = datetime.now(UTC)
    figure = json.loads(arrivals_figure(Participant.objects.filter(study__slug="effort-demo"), now=now))
    assert "dtick" not in figure["layout"]["yaxis"] and figure["layout"]["yaxis"]["rangemode"] == "tozero"
    assert {trace["mode"] for trace in figure["data"]} == {"lines"}


def test_a_long_step_line_is_thinned_with_exact_counts(demo_study, monkeypatch):
    """Beyond ARRIVALS_MAX_POINTS arrivals of a condition, the database keeps every k-th arrival and the last,
    k = ceil(arrivals / ARRIVALS_MAX_POINTS), each with its exact count."""
    from research import dashboard

    monkeypatch.setattr(dashboard, "ARRIVALS_MAX_POINTS", 10)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(45):
        participant_arrive(study_slug="effort-demo", external_id=f"p{n}", at=start + timedelta(minutes=n))
    figure = json.loads(arrivals_figure(Participant.objects.filter(study__slug="effort-demo")))
    (trace,) = figure["data"]
    assert trace["y"] == [1, 6, 11, 16, 21, 26, 31, 36, 41, 45]
    assert trace["x"][1] == (start + timedelta(minutes=5)).isoformat()
    assert trace["x"][-1] == (start + timedelta(minutes=44)).isoformat()
    monkeypatch.setattr(dashboard, "ARRIVALS_MAX_POINTS", 45)
    figure = json.loads(arrivals_figure(Participant.objects.filter(study__slug="effort-demo")))
    assert figure["data"][0]["y"] == list(range(1, 46))
