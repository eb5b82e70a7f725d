"""gunicorn's master warms the app before forking (config/warm_up.py)."""

import json
from pathlib import Path

import pytest

from config.warm_up import warm_up


@pytest.mark.django_db(transaction=True)
def test_warm_up_builds_the_newest_studies_content_and_closes_its_connection():
    from django.db import connection

    from studies import content
    from studies.services import study_load

    bundled = Path(__file__).resolve().parents[1] / "studies" / "bundled" / "disagreement_synthetic.json"
    study = study_load(spec=json.loads(bundled.read_text())).study
    content._CACHE.clear()
    warm_up()
    assert content._CACHE.get(study.spec_hash) is not None
    assert connection.connection is None  # nothing shared with the forked workers


def test_warm_up_without_a_database_leaves_the_studies_to_the_first_requests(monkeypatch, caplog):
    from django.db import DatabaseError

    from studies.models import Study

    def unavailable(*args, **kwargs):
        raise DatabaseError("connection refused")

    monkeypatch.setattr(Study.objects, "order_by", unavailable)
    warm_up()
    assert "studies not loaded" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_warm_up_compiles_the_dashboard_and_builds_the_reverse_lookups(monkeypatch):
    """A new process's first dashboard view finds its template compiled and ``reverse``'s lookups built."""
    from django.urls import clear_url_caches, get_resolver

    import config.warm_up

    compiled: list[str] = []
    real = config.warm_up.get_template
    monkeypatch.setattr(config.warm_up, "get_template", lambda name: compiled.append(name) or real(name))
    clear_url_caches()  # a resolver that has built nothing yet
    warm_up()
    assert "researcher/dashboard.html" in compiled
    resolver = get_resolver()
    assert resolver._populated and all(sub._populated for _, sub in resolver.namespace_dict.values())
