"""Study files: NaN / Infinity, deep nesting, control characters, duplicate keys and size limits are
refused with ``path: rule``, by the validator and by ``load_study`` (nothing stored)."""

import copy
import json

import pytest
from django.core.management import CommandError, call_command

from studies.models import Study
from studies.study_file import InvalidStudyFile, read_study_file, validate_study
from tests.conftest import DEMO_FILE


def problems_of(spec) -> list[str]:
    with pytest.raises(InvalidStudyFile) as info:
        validate_study(spec)
    return [str(p) for p in info.value.problems]


def file_problems(tmp_path, text: str) -> list[str]:
    path = tmp_path / "study.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidStudyFile) as info:
        read_study_file(path)
    return [str(p) for p in info.value.problems]


@pytest.fixture
def demo_text() -> str:
    return DEMO_FILE.read_text()


def load_refused(tmp_path, text: str, expected: str) -> None:
    path = tmp_path / "load.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CommandError) as info:
        call_command("load_study", str(path))
    assert expected in str(info.value)
    assert Study.objects.count() == 0


def subject_risk(text: str, replacement: str) -> str:
    spec = json.loads(text)
    marker = 0.123456789
    spec["conditions"][0]["subjects"][2]["risk_score"] = marker
    return json.dumps(spec, indent=1).replace(str(marker), replacement)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_with_their_path(tmp_path, demo_text, constant):
    text = subject_risk(demo_text, constant)
    expected = f"conditions[0].subjects[2].risk_score: {constant} is not allowed: numbers must be finite"
    assert file_problems(tmp_path, text) == [expected]


def test_overflowing_number_and_nan_in_a_dict(tmp_path, demo_text, demo_spec):
    text = subject_risk(demo_text, "1e400")  # Python reads it as inf
    assert file_problems(tmp_path, text) == [
        "conditions[0].subjects[2].risk_score: inf is not allowed: numbers must be finite"
    ]
    spec = copy.deepcopy(demo_spec)
    spec["conditions"][1]["subjects"][0]["series"][1] = float("nan")
    assert problems_of(spec) == ["conditions[1].subjects[0].series[1]: nan is not allowed: numbers must be finite"]


def test_deep_nesting_is_refused_without_a_traceback(tmp_path, demo_text, demo_spec):
    spec = copy.deepcopy(demo_spec)
    inner: dict = {}
    spec["conditions"][0]["subjects"][0]["demographics"] = {"x": inner}
    for _ in range(5000):  # deeper than the interpreter's recursion limit
        inner["x"] = {}
        inner = inner["x"]
    problems = problems_of(spec)
    assert len(problems) == 1 and problems[0].endswith(": nested deeper than the limit of 50 levels")
    assert problems[0].startswith("conditions[0].subjects[0].demographics.x.x.x")
    deep = '{"format": 1, "slug": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert file_problems(tmp_path, deep) == ["(top level): nested deeper than the limit of 50 levels"]


def test_nul_and_control_characters_are_refused_with_their_path(demo_spec):
    spec = copy.deepcopy(demo_spec)
    spec["title"] = "Eff\x00ort"
    spec["conditions"][0]["subjects"][1]["demographics"]["ra\x1bce"] = "x"
    spec["instructions"] = "Tabs\tand\r\nnew lines are fine."
    assert problems_of(spec) == [
        "conditions[0].subjects[1].demographics: key 'ra\\x1bce' contains the control character U+001B at position 2",
        "title: text contains the control character U+0000 at position 3",
    ]


def test_duplicate_keys_are_refused_with_their_path(tmp_path, demo_text):
    shown_first = '{"slug": "shown-first", ' + demo_text.lstrip()[1:]
    assert file_problems(tmp_path, shown_first) == ["slug: duplicate key (appears 2 times); each key may appear once"]
    nested = demo_text.replace('"key": "arrests"', '"key": "arrests", "key": "income"', 1)
    assert nested != demo_text
    assert file_problems(tmp_path, nested) == [
        "conditions[0].key: duplicate key (appears 2 times); each key may appear once"
    ]


def test_text_list_and_file_size_limits(tmp_path, demo_spec, settings):
    spec = copy.deepcopy(demo_spec)
    spec["instructions"] = "x" * 50_000
    spec["consent"]["text"] = "x" * 50_000
    validate_study(spec)  # at the limit
    spec["instructions"] = "x" * 50_001
    spec["title"] = "t" * 5_001
    spec["conditions"][0]["subjects"][0]["series"] = [1] * 10_001
    assert problems_of(spec) == [
        "conditions[0].subjects[0].series: more than 10,000 items (10,001)",
        "instructions: text longer than 50,000 characters (50,001)",
        "title: text longer than 5,000 characters (5,001)",
    ]
    settings.STUDY_FILE_MAX_BYTES = 1000
    with pytest.raises(InvalidStudyFile, match=r"\(top level\): file is larger than the limit of 1,000 bytes"):
        read_study_file(DEMO_FILE)


@pytest.mark.django_db
def test_load_study_refuses_each_case_and_stores_nothing(tmp_path, demo_text, settings):
    load_refused(tmp_path, subject_risk(demo_text, "NaN"), "conditions[0].subjects[2].risk_score: NaN is not allowed")
    load_refused(tmp_path, '{"slug": "shown-first", ' + demo_text.lstrip()[1:], "slug: duplicate key")
    load_refused(tmp_path, "[" * 100_000 + "]" * 100_000, "nested deeper than the limit of 50 levels")
    load_refused(tmp_path, demo_text.replace('"title": "', '"title": "\\u0000', 1), "title: text contains the control")
    spec = json.loads(demo_text)
    spec["instructions"] = "x" * 60_000
    load_refused(tmp_path, json.dumps(spec), "instructions: text longer than 50,000 characters")
    settings.STUDY_FILE_MAX_BYTES = 1000
    load_refused(tmp_path, demo_text, "file is larger than the limit of 1,000 bytes")
    settings.STUDY_FILE_MAX_BYTES = 5 * 1024 * 1024
    call_command("load_study", str(DEMO_FILE))
    assert Study.objects.count() == 1
