"""Format 2 study files: the example validates, defaults are filled in, every error names its path
and rule, CSV pools are read at load time and stored inline, format 1 still validates."""

import copy
import json
from pathlib import Path

import pytest

from studies.content import study_content
from studies.study_file import InvalidStudyFile, read_study_file, read_study_text, validate_study
from tests.conftest import DEMO_FILE

EXAMPLE = Path(__file__).parent / "format2_example.json"


def example() -> dict:
    return json.loads(EXAMPLE.read_text())


def problems(spec: dict) -> list[str]:
    with pytest.raises(InvalidStudyFile) as caught:
        validate_study(spec)
    return [str(p) for p in caught.value.problems]


def test_example_validates_with_defaults():
    spec = validate_study(example())
    blocks = {b["key"]: b for b in spec["blocks"]}
    assert blocks["judge"]["conditions"] == ["shown", "hidden"]
    assert blocks["judge"]["bts"]["prompt"].startswith("What percentage")
    assert blocks["risk"]["scale"]["positive_from"] == 3  # upper half of 4 labels
    assert blocks["distance"]["measures"] == ["trajectory", "aggregate", "overall"]  # the pool has series
    assert blocks["distance"]["likert"]["points"] == 6
    assert blocks["about"]["questions"][0]["required"] is True
    assert blocks["about"]["questions"][2]["required"] is False
    assert spec["attention"]["exclude_if_failed"] == 1


def test_format_1_still_validates_and_unknown_format_is_refused():
    assert validate_study(json.loads(DEMO_FILE.read_text()))["format"] == 1
    assert problems({**example(), "format": 3}) == ["format: must be 1 or 2 (got 3)"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s["blocks"][2].update(pool="nope"), "blocks[2].pool: 'nope' is not one of the pools (defendants)"),
        (
            lambda s: s["blocks"][2]["assignment"].update(per_participant=3),
            "blocks[2].assignment.per_participant: must be divisible by the number of values of 'race' (2)",
        ),
        (
            lambda s: s["blocks"][2]["assignment"].update(per_participant=14),
            "blocks[2].assignment.per_participant: must be <= the number of items (12)",
        ),
        (
            lambda s: s["pools"][0]["display"].update(profile="aged {agee}"),
            "pools[0].display.profile: placeholder {agee} is not a column of the pool's subjects",
        ),
        (
            lambda s: s["blocks"][5]["pairs"].append({"a": "d02", "b": "d01"}),
            "blocks[5].pairs: the pair d01 / d02 is listed twice",
        ),
        (
            lambda s: s["blocks"][5]["pairs"].append({"a": "d02", "b": "zz"}),
            "blocks[5].pairs[3].b: subject 'zz' is not",
        ),
        (lambda s: s["blocks"][3].update(correct="Purple"), "blocks[3].correct: 'Purple' is not one of the options"),
        (lambda s: s["blocks"][4].update(conditions=["other"]), "blocks[4].conditions[0]: 'other' is not one of"),
        (lambda s: s["blocks"][5]["order"]["fixed"].update(d05=0), "blocks[5].order.fixed: position 0 is given to"),
        (
            lambda s: s["blocks"][1]["questions"][1].update(min=50, max=20),
            "blocks[1].questions[1].max: must be >= min (50)",
        ),
        (
            lambda s: s["blocks"][1]["questions"][0].pop("options"),
            "blocks[1].questions[0]: a single_choice question needs 'options'",
        ),
        (lambda s: s["blocks"][2].pop("model"), "blocks[2]: a agree task needs 'model'"),
        (lambda s: s["blocks"][2].update(task="loan_choice"), "blocks[2].task: 'loan_choice' is not one of"),
        (lambda s: s["blocks"][2].pop("task"), "blocks[2]: 'task' is required"),
        (lambda s: s["blocks"][2].update(strength=True), "blocks[2].strength: not used by a agree task"),
        (
            lambda s: s["pools"][0]["subjects"][0]["models"].pop("ai"),
            "blocks[2].model: subject 'd01' has no label from model 'ai'",
        ),
        (lambda s: s["attention"].update(exclude_if_failed=2), "attention.exclude_if_failed: cannot exceed the number"),
        (lambda s: s["pools"][0]["subjects"][1].update(id="d01"), "pools[0].subjects: subject id 'd01' is used twice"),
    ],
)
def test_errors_name_path_and_rule(edit, expected):
    spec = example()
    edit(spec)
    found = problems(spec)
    assert any(p.startswith(expected) for p in found), found


def test_a_condition_may_say_whether_its_effort_feature_is_desirable_and_its_aggregate_scale():
    """``desirable`` with ``aggregate_scale`` (default 1.0, as in format 1) or neither; a scale alone,
    a scale <= 0 and a desirable that is not a boolean are refused with their path."""
    spec = example()
    spec["conditions"][0].update(desirable=True, aggregate_scale=20.0)
    spec["conditions"][1].update(desirable=False)
    conditions = validate_study(spec)["conditions"]
    assert [(c.get("desirable"), c.get("aggregate_scale")) for c in conditions] == [(True, 20.0), (False, 1.0)]
    assert all("desirable" not in c and "aggregate_scale" not in c for c in validate_study(example())["conditions"])
    spec["conditions"][1] = {"key": "hidden", "label": "Hidden", "aggregate_scale": 2.0}
    assert problems(spec) == [
        "conditions[1].aggregate_scale: needs desirable (both describe the condition's effort feature)"
    ]
    spec["conditions"][1].update(desirable="yes", aggregate_scale=0)
    found = problems(spec)
    assert any(p.startswith("conditions[1].desirable: ") for p in found), found
    assert any(p.startswith("conditions[1].aggregate_scale: ") for p in found), found


def _among(after_items: int, blocks: tuple[str, ...] = ("judge", "risk")) -> dict:
    spec = example()
    spec["blocks"][3]["among"] = {"blocks": list(blocks), "after_items": after_items}
    return spec


@pytest.mark.parametrize("seed", range(5))
def test_an_attention_block_among_task_blocks_comes_after_that_many_of_their_items(seed):
    """The check (condition shown) among judge (4 items shown) and risk (2): after_items 2 puts it
    between the participant's 2nd and 3rd judge pages, 5 after the first risk page; the other pages
    and their order are those of the plan without ``among`` (the check drawn nothing)."""
    from participation.plan import plan_for

    chosen = {"judge": ["d01", "d02", "d07", "d08"], "risk": ["d03", "d09"]}  # as the assignment samples them
    plain = plan_for(validate_study(example()), "shown", seed, chosen)
    without = [p for p in plain if p["kind"] != "attention"]
    for after, before in ((2, "judge"), (5, "risk"), (0, "about")):
        spec = _among(after)
        spec["blocks"][3]["conditions"] = ["shown"]  # 5 items only there
        plan = plan_for(validate_study(spec), "shown", seed, chosen)
        at = next(i for i, p in enumerate(plan) if p["kind"] == "attention")
        assert plan[at] == {"key": "check", "kind": "attention", "block": "check"}
        assert [p for p in plan if p["kind"] != "attention"] == without
        assert sum(p.get("block") in ("judge", "risk") for p in plan[:at]) == after
        assert plan[at - 1]["block"] == before


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (_among(5), "blocks[3].among.after_items: must be <= the items of its blocks shown in condition 'hidden' (4)"),
        (_among(1, ("judge", "intro")), "blocks[3].among.blocks[1]: 'intro' is not a task block"),
        (_among(1, ("nope",)), "blocks[3].among.blocks[0]: 'nope' is not a task block"),
        (
            _among(1) | {"shuffle": [{"units": [["check"], ["risk"]]}]},
            "blocks[3].among: an attention block among task items cannot be in a shuffle unit",
        ),
    ],
)
def test_an_attention_block_among_task_blocks_is_checked(spec, expected):
    assert problems(spec) == [expected]


def test_csv_pool_is_read_at_load_and_stored_inline(tmp_path):
    spec = example()
    (tmp_path / "people.csv").write_text(
        "id,sex,age,charge,priors,race,score,label\n"
        + "\n".join(f"p{i},male,{20 + i},theft,{i},{'AB'[i % 2]},0.{i},{i % 2}" for i in range(1, 9))
        + "\n"
    )
    people = (tmp_path / "people.csv").read_text()
    (tmp_path / "numbered.csv").write_text(people.replace("\np", "\n00"))  # ids 001 .. 008
    pool = spec["pools"][0]
    del pool["subjects"]
    pool["csv"] = {
        "path": "people.csv",
        "id_column": "id",
        "group_columns": ["race"],
        "models": {"ai": {"score_column": "score", "label_column": "label"}},
    }
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task" or b["task"] in ("agree", "rate")]
    (tmp_path / "study.json").write_text(json.dumps(spec))
    stored = read_study_file(tmp_path / "study.json")
    subject = stored["pools"][0]["subjects"][0]
    assert subject == {
        "id": "p1",
        "features": {"sex": "male", "age": 21, "charge": "theft", "priors": 1},
        "groups": {"race": "B"},
        "models": {"ai": {"score": 0.1, "label": 1}},
    }
    content = study_content(stored, "csv-test")
    assert content.profile("defendants", "p1").text.startswith("The defendant is a male aged 21.")
    numbered = {**spec, "pools": [{**pool, "csv": {**pool["csv"], "path": "numbered.csv"}}]}
    (tmp_path / "numbered.json").write_text(json.dumps(numbered))
    ids = [s["id"] for s in read_study_file(tmp_path / "numbered.json")["pools"][0]["subjects"]]
    assert ids == [f"00{i}" for i in range(1, 9)]
    # The same file as an upload without its folder: the CSV pool cannot be resolved.
    with pytest.raises(InvalidStudyFile, match=r"pools\[0\]\.csv: a pool read from a CSV can only be loaded"):
        read_study_text(json.dumps(spec))


@pytest.mark.parametrize(
    ("csv", "expected"),
    [
        ("id,race,label\np1,A,1\np1,B,0\n", "id 'p1' appears more than once"),
        ("id,race,label\np1,A,1\np2,B,2\n", "label column 'label' (model 'ai') must be 0 or 1; rows 3 are not"),
        ("id,race,lbl\np1,A,1\n", "column 'label' is not in the CSV"),
        ("id,race,label\np1,,1\n", "column 'race' is blank in rows 2"),
        ("id,race,race\np1,A,1\n", "duplicate"),
    ],
)
def test_csv_pool_errors(tmp_path, csv, expected):
    spec = copy.deepcopy(example())
    spec["pools"][0] = {
        "key": "defendants",
        "display": {"table": ["race"]},
        "csv": {
            "path": "p.csv",
            "id_column": "id",
            "group_columns": ["race"],
            "models": {"ai": {"label_column": "label"}},
        },
    }
    spec["blocks"] = [spec["blocks"][0]]
    (tmp_path / "p.csv").write_text(csv)
    (tmp_path / "s.json").write_text(json.dumps(spec))
    with pytest.raises(InvalidStudyFile) as caught:
        read_study_file(tmp_path / "s.json")
    assert expected in str(caught.value)


def test_a_validated_file_validates_again_unchanged():
    """study_load validates what read_study_file returned: defaults must pass their own rules,
    also for a study without attention checks (its default threshold is inert)."""
    spec = example()
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "attention"]
    del spec["attention"]
    once = validate_study(spec)
    assert validate_study(once) == once
    demo = json.loads(DEMO_FILE.read_text())
    demo["attention_checks"] = {"items": []}
    once = validate_study(demo)
    assert validate_study(once) == once


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("{sex.__class__.__mro__}", "placeholder {sex.__class__.__mro__} is not a plain {column}"),
        ("a {sex!r}", "placeholder {sex!r} is not a plain {column}"),
        ("a {sex:>99999999}", "placeholder {sex:>99999999} is not a plain {column}"),
        ("a {sex[0]}", "placeholder {sex[0]} is not a plain {column}"),
        ("a {sex", "expected '}' before end of string; write {column} for a value and {{ or }} for a brace"),
        ("a } b", "Single '}' encountered in format string; write {column} for a value and {{ or }} for a brace"),
    ],
)
def test_profile_placeholders_follow_the_builders_rule(profile, rule):
    """Issue 22, finding 14: a column may be named ``sex.__class__.__mro__``, but the profile may only
    name plain ``{column}`` placeholders (a format would render Python objects or pad without bound)."""
    spec = example()
    for subject in spec["pools"][0]["subjects"]:
        subject["features"]["sex.__class__.__mro__"] = "x"
    spec["pools"][0]["display"]["profile"] = profile
    found = problems(spec)
    assert found[0].startswith(f"pools[0].display.profile: {rule}")
    assert len(found) == 1
