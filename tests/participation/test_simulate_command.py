"""simulate_participants with rater groups: the --group-effect option and, for a format 2 study run
through the real services, the planted difference found by the per-group analysis."""

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from fairness.rater_groups import rater_group_difference_test
from participation.models import Answer, Participant
from participation.simulate import simulate_participants
from studies.demo_study import build_demo_study
from studies.models import Study
from studies.services import spec_digest, study_load
from studies.study_file import validate_study

QUESTIONNAIRE = {
    "key": "about",
    "type": "questionnaire",
    "questions": [{"key": "role", "type": "single_choice", "text": "Your role?", "options": ["judge", "lay"]}],
}


def _agree_study(slug: str = "agree-sim") -> dict:
    subjects = [
        {
            "id": f"s{i}",
            "features": {"priors": i % 7},
            "groups": {"race": "a" if i % 2 else "b"},
            "models": {"ai": {"score": (i % 10) / 10 + 0.05, "label": int(i % 10 >= 5)}},
        }
        for i in range(40)
    ]
    return {
        "format": 2,
        "slug": slug,
        "title": "Agree simulation",
        "consent": {"text": "Consent."},
        "completion": {"code": "DONE"},
        "pools": [{"key": "people", "subjects": subjects, "display": {"profile": "{priors} priors"}}],
        "blocks": [
            QUESTIONNAIRE,
            {
                "key": "agree",
                "type": "task",
                "task": "agree",
                "pool": "people",
                "model": "ai",
                "assignment": {"per_participant": 20},
            },
        ],
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("role=judge", "expected QUESTION=OPTION:FIELD=VALUE"),
        ("role=judge:leniency=x", "'x' is not a number"),
        ("age=30:leniency=1", "no single-choice question with that key"),
        ("role=clerk:leniency=1", "role='clerk': not one of"),
    ],
)
def test_bad_group_effect_is_refused_before_anyone_is_created(option, message):
    spec = validate_study(_agree_study())
    Study.objects.create(slug=spec["slug"], title=spec["title"], spec=spec, spec_hash=spec_digest(spec))
    with pytest.raises(CommandError, match=message):
        call_command("simulate_participants", "agree-sim", "--n", "3", "--group-effect", option)
    assert not Participant.objects.exists()


@pytest.mark.django_db
def test_group_effects_are_refused_for_a_format_1_study():
    """A format 1 file is stored as its conversion, which has no questionnaire to group the raters by."""
    study_load(spec={**build_demo_study(), "slug": "demo"})
    with pytest.raises(CommandError, match="group effect on 'role': the study has no single-choice question"):
        call_command("simulate_participants", "demo", "--n", "2", "--group-effect", "role=judge:leniency=1")
    assert not Participant.objects.exists()


@pytest.mark.django_db
def test_simulated_agree_study_shows_the_planted_rater_group_difference():
    """Through consent, the task registry and page_submit: judges agree with the AI more (+1.5 logit)."""
    pytest.importorskip("tasks")
    pytest.importorskip("participation.assignment")
    study = study_load(spec=_agree_study()).study
    simulate_participants(
        "agree-sim", n=60, seed=5, decline_rate=0.0, group_effects={"role": {"judge": {"leniency": 1.5}}}
    )
    roles = dict(
        Answer.objects.filter(participant__study=study, question="about/role").values_list("participant_id", "text")
    )
    groups = {s["id"]: (s["groups"]["race"], s["models"]["ai"]["label"]) for s in study.spec["pools"][0]["subjects"]}
    rows = [
        (pid, roles[pid], *groups[subject], 1 - int(agree))
        for pid, subject, agree in Answer.objects.filter(participant__study=study, measure="agree").values_list(
            "participant_id", "subject_key", "number"
        )
    ]
    answers = pd.DataFrame(rows, columns=["participant", "role", "group", "model_label", "disagreement"])
    assert answers.groupby("participant").size().eq(20).all() and answers["participant"].nunique() == 60
    test = rater_group_difference_test(answers, rater_group="role", n_permutations=999)
    assert test.pvalue < 0.05 and test.by_group["judge"] < test.by_group["lay"]


@pytest.mark.django_db
def test_a_simulated_page_is_shown_when_the_previous_one_is_sent_in_one_statement():
    """Each saved page records the next one as shown (``page_submit(show_next=True)``, as the web view does),
    and the participant's pages are saved at once (``participant_submit_all``): one page-visit INSERT for all
    (page by page it was one per page and the first page's display), and every page's visit is as before: shown
    when the previous page was sent, then submitted."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from participation.models import PageVisit

    study_load(spec=validate_study(_agree_study()))
    with CaptureQueriesContext(connection) as queries:
        report = simulate_participants("agree-sim", n=1, seed=5, decline_rate=0)
    assert report.completed == 1
    person = Participant.objects.get()
    visits = list(PageVisit.objects.filter(participant=person).order_by("first_shown_at", "id"))
    assert [v.page for v in visits] == [p["key"] for p in person.plan]
    assert visits[0].first_shown_at == person.consented_at
    assert all(v.submitted_at > v.first_shown_at for v in visits)
    assert [v.first_shown_at for v in visits[1:]] == [v.submitted_at for v in visits[:-1]]
    table = PageVisit._meta.db_table
    # On PostgreSQL the answers' INSERT and the visits' go in one round trip (``execute_together``).
    inserts = [q["sql"] for q in queries.captured_queries if f'INSERT INTO "{table}"' in q["sql"]]
    assert len(inserts) == 1  # every page's visit (before: the first page shown, then one per page sent)
