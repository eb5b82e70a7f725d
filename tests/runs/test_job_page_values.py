"""The job page shows a job's options in words, not as Python literals (``None``, ``[]``, ``{}``)."""

import re

import pytest
from django.test import Client

from runs.models import Job
from runs.templatetags.job_values import NOT_SET, readable


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, NOT_SET),
        ([], NOT_SET),
        ({}, NOT_SET),
        ("", NOT_SET),
        (True, "yes"),
        (False, "no"),
        (0, "0"),
        (0.05, "0.05"),
        (["role", "gender"], "role, gender"),
        ({"low": 1, "high": None}, "low: 1, high: not set"),
        ([["a", "b"], []], "a, b, not set"),
    ],
)
def test_values_in_words(value, shown):
    assert readable(value) == shown


@pytest.mark.django_db
def test_the_job_page_shows_no_python_literals(demo_study, researcher):
    params = {"by": [], "condition": None, "exclude": {}, "bootstrap": True, "seed": 7, "note": "<b>x</b>"}
    job = Job.objects.create(kind=Job.Kind.ANALYSIS, study=demo_study, created_by=researcher, params=params)
    client = Client()
    client.force_login(researcher)
    body = client.get(f"/researcher/jobs/{job.pk}/").content.decode()
    options = re.search(r"<dt>Options</dt><dd>(.*?)</dd>", body, re.S).group(1)
    assert set(options.split("; ")) == {  # in any order (PostgreSQL's jsonb orders keys its own way)
        "by: not set",
        "condition: not set",
        "exclude: not set",
        "bootstrap: yes",
        "seed: 7",
        "note: &lt;b&gt;x&lt;/b&gt;",
    }
    for literal in ("None", "[]", "{}", "True"):
        assert literal not in options
