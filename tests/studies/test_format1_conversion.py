"""Format 1 files written as format 2 blocks (``studies.format1.format1_to_format2``)."""

import json
import os
from collections import Counter

import pytest

from participation.models import Answer
from participation.plan import plan_for
from participation.simulate import simulate_participants
from research.export import export_tables
from studies.format1 import attention_slots, format1_to_format2
from studies.format2 import condition_summaries
from studies.services import study_load
from studies.study_file import InvalidStudyFile, pages_per_participant, validate_study
from tasks.questions import answer_question, answer_set, answers_block, answers_subject, block_set, page_key
from tests.conftest import DEMO_FILE
from tests.format1_plan import build_plan


@pytest.fixture
def demo() -> dict:
    return validate_study(json.loads(DEMO_FILE.read_text()))


def _small() -> dict:
    """One condition, two stimulus sets of two comparisons, two attention checks, two prompts."""
    subjects = [
        {"id": name, "series": [1, 2, 3], "risk_score": 0.1 * (i + 1), "label": i % 2, "demographics": {"race": "A"}}
        for i, name in enumerate(["K1", "A", "B", "K2", "C", "D"])
    ]
    relations = ("similar_trend_similar_total", "different_trend_different_total")
    sets = [
        {
            "key": key,
            "reference": k,
            "comparisons": [{"subject": x, "relation": r} for x, r in zip(xs, relations, strict=True)],
        }
        for key, k, xs in (("s1", "K1", ["A", "B"]), ("s2", "K2", ["C", "D"]))
    ]
    check = {"question": "Choose 'Blue'.", "options": ["Red", "Blue"], "correct": "Blue"}
    return {
        "format": 1,
        "slug": "small-study",
        "title": "Small",
        "consent": {"text": "Consent?"},
        "instructions": "Read this.",
        "conditions": [
            {
                "key": "arrests",
                "label": "Arrests",
                "feature": "yearly arrests",
                "unit": "arrests",
                "desirable": False,
                "risk_label": "risk of re-offending",
                "context": "Each person is a defendant.",
                "subjects": subjects,
                "stimulus_sets": sets,
                "disagreement_prompts": [{"key": "q1", "subject": "A"}, {"key": "q2", "subject": "D"}],
            }
        ],
        "attention_checks": {"items": [{"key": "ac1", **check}, {"key": "ac2", **check}], "exclude_if_failed": 2},
        "completion": {"code": "DONE1"},
    }


def test_attention_slots_spread_the_checks_evenly_or_after_the_pair_given():
    # 2 checks over 4 pairs: after round(4/3) = 1 and round(8/3) = 3 pairs; after_pair wins, capped at n_pairs
    assert attention_slots([{"key": "a"}, {"key": "b"}], 4) == {1: [{"key": "a"}], 3: [{"key": "b"}]}
    assert attention_slots([{"key": "a", "after_pair": 9}], 4) == {4: [{"key": "a", "after_pair": 9}]}


def test_a_small_file_becomes_the_hand_worked_blocks():
    converted = validate_study(format1_to_format2(validate_study(_small())))
    blocks = converted["blocks"]
    # check 1 after pair 1, check 2 after pair 3 (round(i x 4 / 3)) of the participant's pairs
    assert [b["key"] for b in blocks] == [
        "instructions",
        "ac1",
        "ac2",
        "arrests-s1",
        "arrests-s1-output",
        "arrests-s2",
        "arrests-s2-output",
        "arrests-disagreement",
    ]
    assert [b["among"] for b in blocks[1:3]] == [
        {"blocks": ["arrests-s1", "arrests-s2"], "after_items": 1},
        {"blocks": ["arrests-s1", "arrests-s2"], "after_items": 3},
    ]
    assert blocks[3]["pairs"] == [
        {"a": "K1", "b": "A", "relation": "similar_trend_similar_total"},
        {"a": "K1", "b": "B", "relation": "different_trend_different_total"},
    ]
    assert blocks[3]["measures"] == ["trajectory", "aggregate", "overall"]
    assert blocks[3]["rationale_factors"] is True and blocks[3]["bts"]["measures"] == ["overall"]
    assert blocks[6]["sets"] == [{"key": "s2", "reference": "K2", "comparisons": ["C", "D"]}]
    assert blocks[6]["risk_label"] == "risk of re-offending"
    assert {b.get("intro") for b in blocks if b["type"] == "task"} == {"Each person is a defendant."}
    assert converted["attention"]["exclude_if_failed"] == 2
    prompts = next(p for p in converted["pools"] if p["key"] == blocks[-1]["pool"])
    assert [s["id"] for s in prompts["subjects"]] == ["A", "D"]
    assert prompts["subjects"][1]["models"] == {"ai": {"score": pytest.approx(0.6), "label": 1}}


def test_the_parts_both_formats_share_are_kept():
    """Quotas over the screening answer, the analysis options, telemetry and the quality rules are kept as
    they are (a study loaded as its conversion still enforces and applies them)."""
    screening = {"question": "Your role?", "options": ["Judge", "Public", "Neither"], "eligible": ["Judge", "Public"]}
    shared = {
        "screening": screening,
        "quotas": [{"question": "screening", "max": 1}],
        "analysis": {"generalise": "stimuli"},
        "telemetry": True,
        "quality": {"min_seconds_per_page": 2, "exclude_if": ["fast"]},
        "time_limit": {"max_minutes": 30},
    }
    original = validate_study(_small() | shared)
    converted = validate_study(format1_to_format2(original))
    assert {name: converted[name] for name in shared} == {name: original[name] for name in shared}


def test_the_demo_converts_to_a_valid_format2_file_with_every_subject_pair_set_and_prompt(demo):
    converted = validate_study(format1_to_format2(demo))
    assert converted["format"] == 2 and converted["slug"] == demo["slug"]
    assert [(c["key"], c["desirable"], c["aggregate_scale"]) for c in converted["conditions"]] == [
        (c["key"], c["desirable"], c["aggregate_scale"]) for c in demo["conditions"]
    ]
    pools = {p["key"]: p for p in converted["pools"]}
    for condition in demo["conditions"]:
        key = condition["key"]
        pool = pools[key]
        assert pool["display"]["chart"]["time_labels"] == condition["time_labels"]
        assert [
            (s["id"], s["series"], s["groups"], s["models"]["ai"]["score"], s["models"]["ai"]["label"])
            for s in pool["subjects"]
        ] == [(s["id"], s["series"], s["demographics"], s["risk_score"], s["label"]) for s in condition["subjects"]]
        mine = [b for b in converted["blocks"] if b.get("conditions") == [key]]
        pairs = [(p["a"], p["b"], p["relation"]) for b in mine if b.get("task") == "pair_distance" for p in b["pairs"]]
        assert pairs == [
            (s["reference"], c["subject"], c["relation"]) for s in condition["stimulus_sets"] for c in s["comparisons"]
        ]
        sets = [s for b in mine if b.get("task") == "fair_score" for s in b["sets"]]
        assert sets == [
            {"key": s["key"], "reference": s["reference"], "comparisons": [c["subject"] for c in s["comparisons"]]}
            for s in condition["stimulus_sets"]
        ]
        (agree,) = [b for b in mine if b.get("task") == "agree"]
        assert [s["id"] for s in pools[agree["pool"]]["subjects"]] == [
            p["subject"] for p in condition["disagreement_prompts"]
        ]
        assert agree["one_page"] and agree["item_keys"] == {
            p["subject"]: p["key"] for p in condition["disagreement_prompts"]
        }
        assert [b["question"] for b in mine if b["type"] == "attention"] == [
            c["question"] for c in demo["attention_checks"]["items"]
        ]
        for block in mine:
            if block.get("task") == "pair_distance":
                assert block["likert"] == demo["likert"] and block["bts"]["prompt"] == demo["bts"]["prompt"]
        # the same pages: all disagreement prompts on one page, as format 1 asks them
        assert condition_summaries(converted)[key].pages == pages_per_participant(demo)[key]
        for seed in range(3):
            assert len(plan_for(converted, key, seed)) == len(build_plan(demo, key, seed))


def _checks_among_pairs(plan: list[dict], pair_kind: str) -> list[tuple[str, int, str]]:
    """(check, pairs before it, the kind of the page before it) of a plan, counting a pair at its
    ``overall`` page (format 1 ``likert``, format 2 ``pair_distance``)."""
    pairs, out = 0, []
    for i, page in enumerate(plan):
        if page["kind"] == pair_kind and page["measure"] == "overall":
            pairs += 1
        elif page["kind"] == "attention":
            out.append((page.get("check") or page["block"], pairs, plan[i - 1]["kind"]))
    return out


def test_the_attention_checks_come_after_the_pair_where_format1_plans_ask_them(demo):
    """In every plan (whatever order of sets and pairs a seed draws), the converted attention block comes
    right after the same number of the participant's pairs as in a format 1 plan, never between the
    pages of one pair and, after a set's last pair, before its fair-score page, as format 1 asks it."""
    converted = validate_study(format1_to_format2(demo))
    for condition in demo["conditions"]:
        key = condition["key"]
        for seed in range(20):
            expected = _checks_among_pairs(build_plan(demo, key, seed), "likert")
            found = [
                (check.removesuffix(f"-{key}"), n, {"pair_distance": "likert"}.get(before, before))
                for check, n, before in _checks_among_pairs(plan_for(converted, key, seed), "pair_distance")
            ]
            assert len(found) == len(demo["attention_checks"]["items"]) > 0
            assert found == expected


def test_simulated_participants_finish_a_converted_study_and_it_exports_their_pairs(db, researcher):
    from django.core.management import call_command

    spec = format1_to_format2(validate_study(_small()))
    study_load(spec=validate_study(spec), owner=researcher)
    report = simulate_participants("small-study", n=3, seed=2, decline_rate=0)
    assert report.completed == 3
    call_command("check_integrity", "small-study", stdout=open(os.devnull, "w"))  # exits 1 on a problem
    pages = export_tables("small-study").pages
    checks = ["attention/ac1", "attention/ac2"]  # format 1's page keys (page_key)
    assert (pages.groupby("participant_id")["page"].apply(lambda p: p.isin(checks).sum()) == 2).all()
    assert {"pair/s1/A/trajectory", "pair/s2/D/overall", "output/s1", "disagreement"} <= set(pages["page"])
    pairs = export_tables("small-study").pairs
    assert len(pairs) == 3 * 4 and pairs["fair_score"].notna().all() and pairs["d_overall"].notna().all()
    assert (pairs["desirable"] == 0).all()  # the condition's, as format 1 exports it
    assert set(pairs["set"]) == {"s1", "s2"}
    disagreements = export_tables("small-study").disagreements
    assert len(disagreements) == 3 * 2 and set(zip(disagreements["prompt"], disagreements["subject"], strict=True)) == {
        ("q1", "A"),
        ("q2", "D"),
    }
    answers = export_tables("small-study").answers
    agree = answers[answers["measure"] == "agree"]
    assert set(agree["block"]) == {"disagreement"}
    assert set(zip(agree["text"], agree["subject"], strict=True)) == {("q1", "A"), ("q2", "D")}
    assert set(answers["block"]) == {"pairs", "output", "disagreement", "attention"}
    attention = answers[answers["block"] == "attention"]
    assert set(attention["subject"]) == {"ac1", "ac2"}
    assert set(answers.loc[answers["block"] == "pairs", "subject"]) == {"K1~A", "K1~B", "K2~C", "K2~D"}
    stored = Answer.objects.filter(participant__study__slug="small-study")
    assert set(stored.filter(measure="fair_score").values_list("question", flat=True)) == {
        "output/s1/A/score",
        "output/s1/B/score",
        "output/s2/C/score",
        "output/s2/D/score",
    }
    assert set(stored.filter(measure="agree").values_list("question", flat=True)) == {
        "disagreement/q1",
        "disagreement/q2",
    }
    assert set(stored.filter(page="pair/s1/A/overall").values_list("set_key", "subject_key")) == {("s1", "A")}


def test_a_fair_score_page_shows_the_blocks_intro_and_names_the_ai_score_with_its_risk_label(db, researcher):
    from django.template.loader import render_to_string

    from participation.pages import condition_index, page_context, page_form

    study = study_load(spec=validate_study(format1_to_format2(validate_study(_small()))), owner=researcher).study
    index = condition_index(study.spec, study.spec_hash, "arrests")
    page = {"key": "arrests-s1-output/s1", "kind": "fair_score", "block": "arrests-s1-output", "item": "s1"}
    ctx = page_context(page, index)
    html = render_to_string(ctx.pop("template"), {**ctx, "form": page_form(page, index), "page": page})
    assert "The AI model gives Person A a risk of re-offending of <strong>10.0 out of 100</strong>" in html
    assert '<h1>Fair risk scores</h1>\n<p class="context">Each person is a defendant.</p>' in html
    del next(b for b in study.spec["blocks"] if b["key"] == "arrests-s1-output")["risk_label"]  # the default
    assert page_context(page, condition_index(study.spec, "other", "arrests"))["risk_label"] == "risk score"


def test_convert_study_writes_a_format2_file_that_loads_and_refuses_a_format2_file(tmp_path):
    from django.core.management import CommandError, call_command

    from studies.study_file import read_study_file

    out = tmp_path / "demo2.json"
    call_command("convert_study", str(DEMO_FILE), out=str(out), stdout=open(os.devnull, "w"))
    assert read_study_file(out) == validate_study(format1_to_format2(validate_study(json.loads(DEMO_FILE.read_text()))))
    with pytest.raises(CommandError, match="demo2.json: format: is already 2; only format 1 files are converted"):
        call_command("convert_study", str(out), out=str(tmp_path / "again.json"))


def test_the_converted_stimulus_sets_come_in_an_order_drawn_per_participant(demo):
    """One shuffle per condition, a unit per set (its pairs, then its fair scores). Each of the 3 sets
    comes first with probability 1/3: in 300 plans 100 +- 4 sd (sd = 8.2) times, but for a 1 in 15,000
    chance."""
    converted = validate_study(format1_to_format2(demo))
    assert [len(s["units"]) for s in converted["shuffle"]] == [len(c["stimulus_sets"]) for c in demo["conditions"]]
    key = demo["conditions"][0]["key"]
    firsts: Counter = Counter()
    for seed in range(300):
        plan = [p for p in plan_for(converted, key, seed) if p["kind"] != "attention"]
        blocks = list(dict.fromkeys(p["block"] for p in plan if "block" in p))
        sets = [b for b in blocks if b.startswith(f"{key}-") and not b.endswith(("-output", "-disagreement"))]
        assert [blocks[blocks.index(s) + 1] for s in sets] == [f"{s}-output" for s in sets]
        firsts[sets[0]] += 1
    assert len(firsts) == 3 and all(67 <= n <= 133 for n in firsts.values()), firsts


def test_convert_study_names_the_rule_when_the_converted_keys_collide(tmp_path):
    from django.core.management import CommandError, call_command

    spec = _small()
    spec["attention_checks"]["items"][0]["key"] = "instructions"  # the instructions block's key
    source = tmp_path / "small.json"
    source.write_text(json.dumps(spec))
    with pytest.raises(
        CommandError,
        match="not a valid format 2 file: invalid study file:\n  - blocks: block key 'instructions' is used twice",
    ):
        call_command("convert_study", str(source), out=str(tmp_path / "out.json"))
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("block_key", "page_key", "extra", "problem"),
    [
        ("arrests-s1", {"block": "output"}, {}, "page_key.block: must be 'pairs' for this block"),
        ("arrests-s1", {"block": "pairs"}, {}, "page_key: a 'pairs' page key needs 'key' (the format 1 set or check)"),
        ("ac1", {"block": "attention"}, {}, "page_key: a 'attention' page key needs 'key' (the format 1 set or check)"),
        ("arrests-disagreement", {"block": "disagreement"}, {"one_page": False}, "needs one_page, without confidence"),
        ("arrests-disagreement", {"block": "disagreement"}, {"confidence": True}, "needs one_page, without confidence"),
        ("instructions", {"block": "pairs", "key": "s1"}, {}, "blocks[0]"),
    ],
)
def test_a_page_key_is_checked_against_its_block(block_key, page_key, extra, problem):
    spec = format1_to_format2(validate_study(_small()))
    block = next(b for b in spec["blocks"] if b["key"] == block_key)
    block.update(page_key=page_key, **extra)
    with pytest.raises(InvalidStudyFile) as caught:
        validate_study(spec)
    assert any(problem in str(p) for p in caught.value.problems), caught.value.problems


def test_a_converted_block_keeps_format1_page_and_question_keys():
    """Hand-worked keys of the small file's converted blocks (``tasks.questions``)."""
    blocks = {b["key"]: b for b in validate_study(format1_to_format2(validate_study(_small())))["blocks"]}
    pairs, output, agree, check = (
        blocks["arrests-s1"],
        blocks["arrests-s1-output"],
        blocks["arrests-disagreement"],
        blocks["ac1"],
    )
    assert page_key(pairs, "K1~A", "overall") == answer_question(pairs, "K1~A", "overall") == "pair/s1/A/overall"
    assert (answer_set(pairs), block_set(pairs), answers_block(pairs)) == ("s1", "s1", "pairs")
    assert answers_subject(pairs, "K1~A", "A") == "K1~A"
    assert page_key(output, "s1") == "output/s1"
    assert answer_question(output, "s1", "k_accept") == "output/s1/k_accept"
    assert answer_question(output, "s1", "fair_score", "A") == "output/s1/A/score"
    assert (answer_set(output, "s1"), answers_block(output)) == ("s1", "output")
    assert page_key(agree) == "disagreement" and answer_question(agree, "A", "agree") == "disagreement/q1"
    assert (answer_set(agree, "A"), answers_subject(agree, "", "A")) == ("", "A")
    assert page_key(check) == "attention/ac1" and answers_subject(check, "", "") == "ac1"
    assert (answer_set(check), answers_block(check)) == ("", "attention")
    native = {"key": "rate-1", "type": "task"}
    assert page_key(native, "x", "overall") == answer_question(native, "x", "overall") == "rate-1/x/overall"
    assert (page_key(native), answer_set(native), answers_block(native), block_set(native)) == ("rate-1",) + (
        "rate-1",
    ) * 3
    assert answers_subject(native, "x", "") == "x" and answers_subject(native, "s1", "A") == "A"
