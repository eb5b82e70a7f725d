"""The export's ``pages`` table's times (``research.export.export_tables``): each visit's stored first display and
submission as ISO 8601 text, and "" (as the participants table writes a missing time) for a page shown but not
submitted."""

import pytest

from participation.models import PageVisit
from participation.services import page_shown
from research.export import export_tables
from tests.surveys.helpers import answer_pages, consented

pytestmark = pytest.mark.django_db


def test_page_times_are_the_stored_times_as_text(demo_study):
    done = answer_pages(consented("effort-demo", "done"))
    midway = answer_pages(consented("effort-demo", "midway"), count=3)
    page_shown(participant=midway, page_key=midway.plan[midway.position]["key"])
    tables = export_tables("effort-demo")
    pages = tables.pages.set_index(["participant_id", "page"])
    visits = PageVisit.objects.filter(participant__in=[done, midway]).select_related("participant")
    assert len(visits) == len(pages) == len(done.plan) + 4
    for visit in visits:
        row = pages.loc[(str(visit.participant.pseudonym), visit.page)]
        assert row["first_shown_at"] == visit.first_shown_at.isoformat()
        assert row["submitted_at"] == ("" if visit.submitted_at is None else visit.submitted_at.isoformat())
    assert (pages["submitted_at"] == "").sum() == 1
