"""The statements a study page costs do not grow with time limits, outcomes or pilots: a page GET
reads the participant and records the visit, a page POST is the three statements of page_submit
(time limits are checked from the cached enrolment, in Python)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from participation.pages import condition_index
from tests.surveys.helpers import valid_data
from tests.surveys.prolific_helpers import arrive, load_variant, post_page

pytestmark = pytest.mark.django_db


def _statements(action) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = action()
    assert response.status_code == 200
    return [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE", "BEGIN"))]


@pytest.mark.parametrize("limit", [None, {"max_minutes": 60}, {"max_minutes": 60, "may_finish_late": True}])
def test_page_get_and_post_statements(client, demo_spec, researcher, limit):
    study = load_variant(demo_spec, researcher, **({"time_limit": limit} if limit else {}))
    participant = arrive(client, "counted")
    client.get("/s/effort-demo/page/")  # caches: study facts, the blank page
    post_page(client, participant, participant.plan[0])  # caches the enrolment
    participant.refresh_from_db()
    get = _statements(lambda: client.get("/s/effort-demo/page/"))
    assert len(get) == 2  # the participant row; the visit INSERT (a no-op: already recorded when the POST answered)
    page = participant.plan[1]
    data = {
        "page_key": page["key"],
        **valid_data(page, condition_index(study.spec, study.spec_hash, participant.condition.key)),
    }
    post = _statements(lambda: client.post("/s/effort-demo/page/", data))
    assert len(post) == 3 and post[0].startswith("UPDATE") and all(s.startswith("INSERT") for s in post[1:])
