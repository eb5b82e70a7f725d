"""The format 2 analysis through the command, the API job and the dashboard: report sections render
escaped, access control as for every run. Answers come from the stated model of test_design_analysis."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from participation.models import Answer, Participant
from runs.models import AnalysisRun
from studies.models import Condition, Study
from studies.services import spec_digest
from studies.study_file import validate_study
from tests.runs import db_snapshot
from tests.runs.conftest import alice
from tests.runs.test_design_analysis import design_spec, simulate

MARKUP = "<i>judge</i>"  # a questionnaire option with markup: every page must show it as text


def load_design_study(owner) -> Study:
    """The test's format 2 study with 60 completed participants' answers (role "judge" shown as MARKUP)."""
    spec = design_spec()
    spec["blocks"][0]["questions"][0]["options"] = [MARKUP, "lay"]
    spec = validate_study({**spec, "consent": {"text": "Consent."}, "completion": {"code": "DONE"}})
    study = Study.objects.create(
        slug=spec["slug"], title=spec["title"], spec=spec, spec_hash=spec_digest(spec), owner=owner
    )
    condition = Condition.objects.create(
        study=study, key="main", label="Main", feature="", unit="", desirable=False, position=0
    )
    answers, questionnaire = simulate(True)
    tasks = {block["key"]: block.get("task") for block in spec["blocks"]}
    people = {}
    for row in questionnaire.itertuples(index=False):
        # The plan a participant saved: one page per answered item, then the questionnaire.
        shown = answers.loc[answers["participant_id"] == row.participant_id, ["block", "subject"]].drop_duplicates()
        plan = [
            {"key": f"{b}/{s}", "kind": tasks[b], "block": b, "item": s, "position": i}
            for i, (b, s) in enumerate(shown.itertuples(index=False))
        ] + [{"key": "about", "kind": "questionnaire", "block": "about"}]
        people[row.participant_id] = Participant.objects.create(
            study=study,
            condition=condition,
            external_id=row.participant_id,
            status="completed",
            seed=1,
            plan=plan,
            position=len(plan),
        )
    rows = [
        Answer(
            participant=people[r.participant_id],
            page=f"{r.block}/{r.subject}",
            question=f"{r.block}/{r.subject}/{r.measure}",
            measure=r.measure,
            set_key=r.block,
            subject_key=r.subject,
            number=r.value,
        )
        for r in answers.itertuples(index=False)
    ]
    for row in questionnaire.itertuples(index=False):
        for key in ("role", "age_band"):
            text = MARKUP if getattr(row, key) == "judge" else getattr(row, key)
            rows.append(
                Answer(
                    participant=people[row.participant_id],
                    page="about",
                    question=f"about/{key}",
                    measure="questionnaire",
                    set_key="about",
                    text=text,
                )
            )
    Answer.objects.bulk_create(rows)
    return study


@pytest.fixture(scope="module")
def _design_snapshot(django_db_setup, django_db_blocker) -> db_snapshot.Snapshot:
    return db_snapshot.take(alice, load_design_study, blocker=django_db_blocker)[0]


@pytest.fixture
def design_study(_design_snapshot, researcher) -> Study:
    """:func:`load_design_study` for the researcher, loaded once per module (``tests.runs.db_snapshot``). Ask for it
    before any other user: the snapshot's owner is the newest user when it is restored."""
    db_snapshot.restore(_design_snapshot)
    return Study.objects.get(slug="design")


def client_for(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_api_job_analyses_a_format_2_study_by_rater_group(design_study, researcher, other_researcher):
    from tests.conftest import run_jobs

    client = APIClient()
    client.force_authenticate(other_researcher)
    assert client.post("/api/studies/design/analyses/", {"by": ["role"]}, format="json").status_code == 404
    client.force_authenticate(researcher)
    body = {"by": ["role"], "n_resamples": 200, "seed": 3}
    response = client.post("/api/studies/design/analyses/", body, format="json")
    assert response.status_code == 202
    run_jobs()
    job = client.get(response["Location"]).json()
    assert job["status"] == "succeeded", job
    run = AnalysisRun.objects.get(pk=job["result"]["analysis_run"])
    blocks = {b["block"]: b for b in run.results["blocks"]}
    dr = {row["rater_group"]: row["mean"] for row in blocks["judge"]["tables"]["disagreement_rate"]}
    assert dr["lay"] > dr[MARKUP]
    assert blocks["judge"]["tables"]["tests"][0]["pvalue"] < 0.05
    client.force_authenticate(other_researcher)
    assert client.get("/api/studies/design/analyses/").status_code == 404
    browser = client_for(researcher)
    report = browser.get(job["result"]["report_url"])
    assert report.status_code == 200
    html = b"".join(report.streaming_content).decode() if report.streaming else report.content.decode()
    assert MARKUP not in html and "&lt;i&gt;judge&lt;/i&gt;" in html
    for heading in (
        "Block judge (agree): disagreement rate by rater group",
        "Block score (rate): mean ratings",
        "Block score (rate): differential parity of rater groups and the AI",
        "Block alike (pair_comparable): share",
        "Honesty (Bayesian Truth Serum) by rater group",
    ):
        assert heading in html.replace("&#x27;", "'")
    assert html.count('class="explanation"') == html.count('class="report-section"')
    assert client_for(other_researcher).get(job["result"]["report_url"]).status_code == 404


@pytest.mark.slow
@pytest.mark.django_db
def test_analyze_study_by_combined_questions_and_its_errors(design_study, researcher, demo_study, tmp_path, capsys):
    out = tmp_path / "design"
    # 20 resamples: the checks are on the rater groups, the files and the errors, not on intervals
    call_command("analyze_study", "design", out=str(out), resamples=20, by=["role", "age_band"])
    results = json.loads((out / "results.json").read_text())
    assert results["by"] == ["role", "age_band"]
    assert {g["rater_group"] for g in results["rater_groups"]} == {
        f"{MARKUP} / young",
        f"{MARKUP} / old",
        "lay / young",
        "lay / old",
    }
    assert {
        "judge_disagreement_rate.csv",
        "judge_notions.csv",
        "score_ratings.csv",
        "alike_agreement.csv",
        "honesty.csv",
    } <= {p.name for p in out.iterdir()}
    with pytest.raises(
        CommandError, match="'gender' is not a questionnaire question of the study; its questions: role, age_band"
    ):
        call_command("analyze_study", "design", out=str(tmp_path / "x"), by=["gender"])
    call_command("analyze_study", "design", out=str(tmp_path / "y"), resamples=20)  # no --by: one rater group
    results = json.loads((tmp_path / "y" / "results.json").read_text())
    assert results["by"] == [] and [g["rater_group"] for g in results["rater_groups"]] == ["all"]
    with pytest.raises(CommandError, match="the study has no questionnaire"):
        call_command("analyze_study", "effort-demo", out=str(tmp_path / "z"), by=["role"])


@pytest.mark.slow
@pytest.mark.django_db
def test_analyze_study_group_options(design_study, tmp_path):
    """--min-group-size, --pool-small and --bins reach the analysis (issue 23), and bad values are named."""
    out = tmp_path / "few"
    # 20 resamples: the checks are on the groups' statuses, not on intervals
    call_command("analyze_study", "design", "--min-group-size", "1000", out=str(out), resamples=20, by=["role"])
    results = json.loads((out / "results.json").read_text())
    assert {g["status"] for g in results["rater_groups"]} == {"too few to compare"}
    assert results["group_options"]["min_group_size"] == 1000 and "too few to compare" in results["sample"]["sentence"]
    call_command(
        "analyze_study", "design", "--min-group-size", "1000", "--pool-small", out=str(out), resamples=20, by=["role"]
    )
    results = json.loads((out / "results.json").read_text())
    assert {g["status"] for g in results["rater_groups"]} == {"pooled into other", "too few to compare"}
    with pytest.raises(CommandError, match="'height': not a subject-group column of any pool .*: race"):
        call_command("analyze_study", "design", "--bins", "height=1", out=str(tmp_path / "h"), by=["role"])
    with pytest.raises(CommandError, match="'race' is not numeric"):
        call_command("analyze_study", "design", "--bins", "race=1,2", out=str(tmp_path / "b"), by=["role"])
    with pytest.raises(CommandError, match="--min-group-size must be a whole number of at least 1"):
        call_command("analyze_study", "design", "--min-group-size", "0", out=str(tmp_path / "c"), by=["role"])
    with pytest.raises(CommandError, match="--min-subject-group must be a whole number of at least 1"):
        call_command("analyze_study", "design", min_subject_group=2.5, out=str(tmp_path / "c"), by=["role"])
    with pytest.raises(CommandError, match="COLUMN=CUT"):
        call_command("analyze_study", "design", "--bins", "age", out=str(tmp_path / "d"), by=["role"])


@pytest.mark.django_db
def test_dashboard_start_form_offers_the_questionnaire_questions(design_study, client, researcher, other_researcher):
    client.force_login(researcher)
    page = client.get("/researcher/studies/design/start/").content.decode()
    assert 'name="by"' in page and 'value="role"' in page and 'value="age_band"' in page
    assert 'name="min_group_size"' in page and 'name="pool_small"' in page and 'name="min_subject_group"' in page
    form = {"seed": 1, "n_resamples": 100, "by": ["role", "age_band"], "min_group_size": 5, "min_subject_group": 10}
    response = client.post("/researcher/studies/design/start/analysis/", form | {"pool_small": "true"})
    assert response.status_code == 302
    from runs.models import Job

    params = Job.objects.get().params
    assert params["by"] == ["role", "age_band"] and params["min_group_size"] == 5 and params["pool_small"] is True
    assert params["bins"] == {}  # no bins given: the pool's quartiles
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/design/start/").status_code == 404


@pytest.mark.django_db
def test_dashboard_start_form_takes_the_subject_group_bins(design_study, client, researcher):
    """Issue 23 item 6: the numeric subject-group bins on the web form, in the command's syntax, reach the job;
    a bad text is refused naming the rule, nothing queued."""
    from runs.models import Job

    client.force_login(researcher)
    assert 'name="bins"' in client.get("/researcher/studies/design/start/").content.decode()
    form = {"seed": 1, "n_resamples": 100, "by": ["role"], "min_group_size": 5, "min_subject_group": 10}
    page = client.post("/researcher/studies/design/start/analysis/", form | {"bins": "age=25 45"})
    assert page.status_code == 400 and "COLUMN=CUT,CUT" in page.content.decode()
    assert 'value="age=25 45"' in page.content.decode()  # the text stays in the form
    page = client.post("/researcher/studies/design/start/analysis/", form | {"bins": "age=1; age=2"})
    assert page.status_code == 400 and "each column&#x27;s cut points once" in page.content.decode()
    assert not Job.objects.exists()
    response = client.post("/researcher/studies/design/start/analysis/", form | {"bins": "age=25,45;\n priors=1"})
    assert response.status_code == 302
    assert Job.objects.get().params["bins"] == {"age": [25.0, 45.0], "priors": [1.0]}


@pytest.mark.django_db
def test_an_unknown_by_question_is_refused_when_the_run_is_requested(design_study, client, researcher, demo_study):
    """400 with the field's error at POST (API and dashboard), no job queued; not a failed job later."""
    from runs.models import Job

    api = APIClient()
    api.force_authenticate(researcher)
    response = api.post("/api/studies/design/analyses/", {"by": ["gender"]}, format="json")
    assert response.status_code == 400
    assert "'gender' is not a questionnaire question of the study; its questions: role, age_band" in str(
        response.json()["fields"]["by"]
    )
    assert api.post("/api/studies/design/analyses/", {"by": ["role", "role"]}, format="json").status_code == 400
    for bad in ({"min_group_size": 0}, {"bins": {"age": []}}, {"bins": {"age": ["x"]}}):
        assert api.post("/api/studies/design/analyses/", {"by": ["role"], **bad}, format="json").status_code == 400
    demo_study.owner = researcher
    demo_study.save()
    response = api.post("/api/studies/effort-demo/analyses/", {"by": ["role"]}, format="json")
    assert response.status_code == 400 and "the study has no questionnaire" in str(response.json()["fields"]["by"])
    client.force_login(researcher)
    page = client.post("/researcher/studies/design/start/analysis/", {"seed": 1, "n_resamples": 100, "by": ["gender"]})
    assert page.status_code == 400 and "is not a questionnaire question" in page.content.decode().replace("&#x27;", "'")
    assert not Job.objects.exists()
