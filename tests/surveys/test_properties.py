"""Property-based tests (hypothesis): any study file either validates or is refused with
path-named problems; any form input is either accepted within range or refused, never a crash."""

import copy
import json

import pytest
from django.utils.datastructures import MultiValueDict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from participation.pages import condition_index
from participation.plan import plan_for
from studies.services import spec_digest, stored_file
from studies.study_file import InvalidStudyFile, validate_study
from tasks import task_for
from tests.conftest import DEMO_FILE

DEMO = json.loads(DEMO_FILE.read_text())
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield from paths(v, (*prefix, i))


ALL_PATHS = [p for p in paths(DEMO) if p]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_PATHS), JSON_VALUES, st.booleans())
def test_mutated_study_files_validate_or_fail_with_paths(path, value, delete):
    spec = copy.deepcopy(DEMO)
    node = spec
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    try:
        validate_study(spec)
    except InvalidStudyFile as exc:
        assert exc.problems and all(isinstance(p.rule, str) and p.rule for p in exc.problems)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_arbitrary_json_is_refused_cleanly(value):
    try:
        validate_study(value)
    except InvalidStudyFile:
        pass


TEXT = st.text(max_size=12) | st.sampled_from(["", "0", "6", "7", "-1", "100", "100.001", "1e3", "nan", "inf", "3.5"])
CONVERTED = stored_file(validate_study(copy.deepcopy(DEMO)))[0]  # the demo as it is stored
INDEX = condition_index(CONVERTED, spec_digest(CONVERTED), "arrests")
PLAN = plan_for(CONVERTED, "arrests", 1)
OVERALL = next(p for p in PLAN if p["kind"] == "pair_distance" and p["measure"] == "overall")
OUTPUT = {**next(p for p in PLAN if p["kind"] == "fair_score"), "subjects": ["C1"]}  # one comparison


def bound(page: dict, data: dict):
    return task_for(page).form(page, INDEX, MultiValueDict({k: [v] for k, v in data.items()}))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["rating", "prediction", "factors", "factor_text"]), TEXT, max_size=4))
def test_likert_form_accepts_only_in_range(data):
    form = bound(OVERALL, data)
    if form.is_valid():
        answers = {a.measure: a for a in form.answers()}
        assert 1 <= answers["overall"].number <= 6 and 0 <= answers["prediction"].number <= 100


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["k_decision", "k_score", "score_C1", "rationale_C1"]), TEXT, max_size=4))
def test_output_form_accepts_only_scores_in_range(data):
    form = bound(OUTPUT, data)
    if form.is_valid():
        for answer in form.answers(ai_score=0.4):
            if answer.measure in ("k_score", "fair_score"):
                assert 0 <= answer.number <= 1
