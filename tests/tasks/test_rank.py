"""The rank task type ("rank these defendants by who should be released"), added as one module, its template
and these tests: its study-file options, its page (one rank per subject; a rank given twice refused with
what was chosen kept), its answers, its simulation (a Plackett-Luce rater) and its analysis into
Plackett-Luce strengths per rater group with a report figure; its builder template and upload preview."""

import pytest
from scipy.stats import spearmanr

from participation.models import Answer
from studies.study_file import validate_study
from tests.tasks import assert_refused, reach_task_page
from tests.tasks.test_choose import SUBJECTS, choice_spec


def rank_spec(**block) -> dict:
    """The choose study's five defendants (``tests.tasks.test_choose.choice_spec``) in a rank block: every four
    of them, and all five."""
    spec = choice_spec()
    spec["slug"] = "rank-release"
    rankings = [{"subjects": [s for s in SUBJECTS if s != left]} for left in SUBJECTS] + [{"subjects": SUBJECTS}]
    task = {"key": "release", "type": "task", "task": "rank", "pool": "subjects", "rankings": rankings}
    spec["blocks"][-1] = task | {"decision": "be released before trial", "model": "ai", **block}
    return spec


def test_the_block_is_validated_by_its_own_rules():
    block = validate_study(rank_spec())["blocks"][-1]
    assert (
        block["question"] == "Rank these {subject_nouns} by who should {decision}." and block["favourable"] == "lower"
    )
    problems = {
        "no decision": (rank_spec(decision=None), "a rank task needs 'decision'"),
        "two subjects": (rank_spec(rankings=[{"subjects": ["D031", "D076"]}]), "rankings[0].subjects"),
        "six subjects": (rank_spec(rankings=[{"subjects": [*SUBJECTS, "D003"]}]), "rankings[0].subjects"),
        "not in the pool": (rank_spec(rankings=[{"subjects": ["D031", "X1", "D076"]}]), "subjects[1]: subject 'X1'"),
        "a subject twice": (rank_spec(rankings=[{"subjects": ["D031", "D031", "D076"]}]), "lists each subject once"),
        "a ranking twice": (
            rank_spec(rankings=[{"subjects": ["D031", "D076", "D112"]}, {"subjects": ["D112", "D031", "D076"]}]),
            "the ranking of D031 / D076 / D112 is listed twice",
        ),
        "another task's option": (rank_spec(strength=True), "blocks[4].strength: not used by a rank task"),
    }
    assert_refused(problems)


@pytest.mark.django_db
def test_a_participant_ranks_a_duplicate_rank_is_refused_and_the_answers_follow_the_contract(client, researcher):
    from studies.services import study_load

    spec = rank_spec()
    study_load(spec=spec, owner=researcher)
    participant, page = reach_task_page(client, spec, "rank")
    shown = page["item"].split("~")
    n = len(shown)
    html = client.get("/s/rank-release/page/").content.decode()
    assert "<h1>Rank these defendants by who should be released before trial.</h1>" in html
    assert "Rank of Defendant A" in html and f"{n} (least deserving)" in html
    typed = {f"rank_{i}": str(i + 1) for i in range(n)} | {"rank_2": "1"}
    refused = client.post("/s/rank-release/page/", {"page_key": page["key"], **typed})
    body = refused.content.decode()
    assert refused.status_code == 422
    assert "Each rank goes to one person: you gave rank 1 to Defendant A, Defendant C." in body
    assert body.count('<option value="1" selected>') == 2 and '<option value="4" selected>' in body  # kept
    assert not Answer.objects.filter(participant=participant, measure="rank").exists()
    missing = client.post("/s/rank-release/page/", {"page_key": page["key"], "rank_0": "1"})
    assert missing.status_code == 422 and f"Give Defendant B a rank from 1 to {n}." in missing.content.decode()
    ranks = {f"rank_{i}": str(n - i) for i in range(n)}  # the last shown first
    client.post("/s/rank-release/page/", {"page_key": page["key"], **ranks})
    stored = Answer.objects.filter(participant=participant, set_key="release")
    assert {(a.subject_key, a.number, a.text) for a in stored} == {
        (subject, float(n - i), page["item"]) for i, subject in enumerate(shown)
    }


@pytest.mark.django_db
def test_simulated_rankings_give_strengths_that_follow_the_ai_and_a_report_figure(researcher, tmp_path):
    """Simulated Plackett-Luce raters rank the subject with the lower risk score higher (``Rank.simulate``): the
    strengths of all participants fall with the AI's scores, each rater group has its own rows, and the report
    shows the table with its figure."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from runs.reports.design import write_design_report
    from studies.services import study_load

    spec = study_load(spec=rank_spec(), owner=researcher).study.spec
    simulate_participants("rank-release", n=40, seed=3, decline_rate=0)
    result = study_analysis("rank-release", spec, by=["role"], n_resamples=50, n_permutations=50, min_group_size=5)
    block = next(b for b in result.blocks if b.task == "rank")
    strengths = block.tables["rank_strengths"]
    overall = strengths[strengths["rater_group"] == "all participants"].set_index("subject")
    assert len(overall) == len(SUBJECTS) and (overall["n_rankings"] == 40 * 6).all()
    scores = {s["id"]: s["models"]["ai"]["score"] for s in spec["pools"][0]["subjects"]}
    assert (
        spearmanr(overall["strength"], [scores[s] for s in overall.index]).statistic <= -0.9 + 1e-9
    )  # one neighbouring swap at most
    assert (overall["ci_low"] <= overall["strength"]).all() and (overall["strength"] <= overall["ci_high"]).all()
    assert strengths["rater_group"].nunique() > 2
    html = write_design_report(result, tmp_path, title="Rankings").read_text()
    assert "Plackett-Luce strengths of the subjects by rater group (rankings)" in html
    assert html.count('class="chart report-chart"') == 1 and (tmp_path / "release_rank_strengths.csv").exists()


def test_draw_rankings_is_reproducible_and_lists_each_set_once():
    from tasks.rank import draw_rankings

    ids = [f"s{i}" for i in range(10)]
    drawn = draw_rankings(ids, size=4, seed=1)
    assert drawn == draw_rankings(ids, size=4, seed=1) and 0 < len(drawn) <= 10
    assert all(len(set(r["subjects"])) == 4 and set(r["subjects"]) <= set(ids) for r in drawn)
    assert len({frozenset(r["subjects"]) for r in drawn}) == len(drawn)


@pytest.mark.django_db
def test_the_builder_template_makes_a_ranking_study_that_previews_its_count_and_analyses_into_a_report(
    client, researcher, tmp_path
):
    """build_study --template rank on a subjects CSV: the upload preview shows "N rankings", and simulated
    participants' rankings analyse into strengths per rater group with the report's figure."""
    from participation.simulate import simulate_participants
    from runs.design_analysis import study_analysis
    from runs.reports.design import write_design_report
    from studies.services import study_load
    from studies.synthetic_defendants import draw_defendants
    from tests.research.test_upload_preview_items import preview_of
    from tests.studies.test_builder import build

    spec = build(draw_defendants(12, seed=5), "rank", group_columns=["race", "sex"], score_column="ai_score")
    spec["slug"] = "rankings"
    block = next(b for b in spec["blocks"] if b["type"] == "task")
    assert block["task"] == "rank" and block["model"] == "ai" and block["decision"] == "be considered lower risk"
    assert all(len(r["subjects"]) == 4 for r in block["rankings"])
    client.force_login(researcher)
    n = len(block["rankings"])
    assert f"<code>{block['key']}</code> (rank): {n} rankings" in preview_of(client, spec)
    stored = study_load(spec=spec, owner=researcher).study.spec
    simulate_participants("rankings", n=30, seed=2, decline_rate=0)
    result = study_analysis("rankings", stored, by=["role"], n_resamples=30, n_permutations=30, min_group_size=5)
    strengths = next(b for b in result.blocks if b.task == "rank").tables["rank_strengths"]
    overall = strengths[strengths["rater_group"] == "all participants"]
    assert len(overall) == 12 and overall["strength"].notna().all() and (overall["n_rankings"] == 30 * n).all()
    html = write_design_report(result, tmp_path, title="Rankings").read_text()
    assert html.count('class="chart report-chart"') == 1
