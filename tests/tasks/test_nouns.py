"""The subject noun's plural in participants' questions: the English rules, a study's own plural, questions
written with the older ``{subject_noun}s`` and a rank page of a pool that names no noun ("people", not
"persons")."""

import pytest

from tasks.nouns import plural, question_text
from tests.tasks import reach_task_page
from tests.tasks.test_rank import rank_spec


@pytest.mark.parametrize(
    ("noun", "expected"),
    [
        ("person", "people"),
        ("Person", "People"),
        ("child", "children"),
        ("woman", "women"),
        ("defendant", "defendants"),
        ("loan applicant", "loan applicants"),
        ("business", "businesses"),
        ("box", "boxes"),
        ("match", "matches"),
        ("company", "companies"),
        ("employee", "employees"),
        ("day", "days"),
    ],
)
def test_english_plurals(noun, expected):
    assert plural(noun) == expected


def test_the_question_takes_the_pools_plural_and_the_older_form():
    pool = {"key": "p", "subject_noun": "juror"}
    assert question_text("Rank these {subject_nouns}.", pool) == "Rank these jurors."
    assert question_text("Rank these {subject_noun}s: this {subject_noun}?", pool) == "Rank these jurors: this juror?"
    own = {"key": "p", "subject_noun": "Mitglied", "subject_noun_plural": "Mitglieder"}
    assert question_text("Which two {subject_nouns} should {decision}?", own, decision="go") == (
        "Which two Mitglieder should go?"
    )


@pytest.mark.django_db
def test_a_pool_without_a_noun_asks_about_people(client, researcher):
    from studies.services import study_load

    spec = rank_spec()
    del spec["pools"][0]["subject_noun"]
    study = study_load(spec=spec, owner=researcher).study
    assert study.spec["pools"][0]["subject_noun_plural"] == "people"
    reach_task_page(client, spec, "rank")
    html = client.get("/s/rank-release/page/").content.decode()
    assert "<h1>Rank these people by who should be released before trial.</h1>" in html
