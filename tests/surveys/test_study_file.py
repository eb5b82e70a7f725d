import copy
import json

import pytest

from studies.study_file import InvalidStudyFile, read_study_file, validate_study
from tests.conftest import DEMO_FILE


def problems_of(spec) -> list[str]:
    with pytest.raises(InvalidStudyFile) as info:
        validate_study(spec)
    return [str(p) for p in info.value.problems]


def test_demo_file_is_valid_and_gets_defaults(demo_spec):
    spec = validate_study(demo_spec)
    assert spec["likert"]["points"] == 6 and len(spec["likert"]["labels"]) == 6
    assert spec["bts"]["questions"] == ["overall"]


def test_minimal_file_gets_documented_defaults(demo_spec):
    spec = copy.deepcopy(demo_spec)
    for key in ("likert", "bts", "attention_checks", "bonus", "rationale_factors"):
        spec.pop(key)
    full = validate_study(spec)
    assert full["likert"]["labels"][0] == "Very similar" and full["likert"]["similar_max"] == 3
    assert full["rationale_factors"] is True


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda s: s["conditions"][0]["subjects"][0].__setitem__("risk_score", 1.5),
            "conditions[0].subjects[0].risk_score: must be <= 1 (got 1.5)",
        ),
        (
            lambda s: s["conditions"][1]["subjects"][2].__setitem__("label", 2),
            "conditions[1].subjects[2].label: 2 is not one of [0, 1]",
        ),
        (
            lambda s: s["conditions"][0]["subjects"][0].__setitem__("series", [1, 2]),
            "conditions[0].subjects[0].series: [1, 2] is too short",
        ),
        (
            lambda s: s["conditions"][0]["stimulus_sets"][1].__setitem__("reference", "NOPE"),
            "conditions[0].stimulus_sets[1].reference: subject 'NOPE' is not among this condition's subjects",
        ),
        (
            lambda s: s["attention_checks"]["items"][0].__setitem__("correct", "Purple"),
            "attention_checks.items[0].correct: 'Purple' is not one of the options",
        ),
        (lambda s: s.__setitem__("slug", "Bad Slug!"), "slug: 'Bad Slug!' does not match"),
        (lambda s: s.pop("completion"), "(top level): 'completion' is required"),
        (
            lambda s: s["likert"].__setitem__("labels", ["a", "b"]),
            "likert.labels: must have exactly 6 labels (one per point), has 2",
        ),
        (
            lambda s: s["conditions"][0]["subjects"][1].__setitem__("id", "K1"),
            "conditions[0].subjects: subject id 'K1' is used twice",
        ),
        (
            lambda s: s["conditions"][0]["subjects"][0]["series"].append(3),
            "conditions[0].subjects: every series must have the same number of time steps",
        ),
    ],
)
def test_errors_name_the_field_and_the_rule(demo_spec, edit, expected):
    spec = copy.deepcopy(demo_spec)
    edit(spec)
    assert any(p.startswith(expected) for p in problems_of(spec)), problems_of(spec)


def test_not_json_reports_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "format": 1,\n  "slug": oops\n}')
    with pytest.raises(InvalidStudyFile, match="line 3, column 11"):
        read_study_file(path)


def test_unreadable_file_is_reported(tmp_path):
    with pytest.raises(InvalidStudyFile, match="cannot read"):
        read_study_file(tmp_path / "missing.json")


def test_read_study_file_roundtrip():
    assert read_study_file(DEMO_FILE)["slug"] == json.loads(DEMO_FILE.read_text())["slug"]


def test_analysis_generalise_is_checked_with_path_and_rule(demo_spec):
    from analysis.pipeline import GENERALISE
    from studies.study_file import GENERALISE as FILE_GENERALISE

    assert FILE_GENERALISE == GENERALISE  # the file's values are the pipeline's (the web process loads no scipy)
    spec = copy.deepcopy(demo_spec)
    spec["analysis"] = {"generalise": "stimuli"}
    assert validate_study(spec)["analysis"] == {"generalise": "stimuli"}
    spec["analysis"] = {"generalise": "participants"}
    assert problems_of(spec) == ["analysis.generalise: 'participants' is not one of ['stimuli']"]
    spec["analysis"] = {"generalize": "stimuli"}
    assert len(problems_of(spec)) == 1 and problems_of(spec)[0].startswith("analysis")
