"""Pages per participant are bounded (issue 22, finding 2): a file whose plan would exceed
``STUDY_MAX_PAGES_PER_PARTICIPANT`` is refused at validation, counted from the file (never by
building a plan), fast, with the blocks that add up; the bundled studies and the builder fit."""

import copy
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from participation.assignment import condition_for, item_choice
from participation.plan import plan_for
from research.study_upload import INLINE_MAX_BYTES
from studies.content import study_content
from studies.format2 import condition_summaries
from studies.services import spec_digest, stored_file
from studies.study_file import InvalidStudyFile, pages_per_participant, read_study_file, validate_study
from tests.conftest import DEMO_FILE, run_jobs

BUNDLED = Path(__file__).resolve().parent.parent.parent / "studies" / "bundled"
EXAMPLE = Path(__file__).parent / "format2_example.json"


def huge(blocks: int, subjects: int) -> dict:
    """A small format 2 file declaring ``blocks`` x ``subjects`` agree pages per participant."""
    return {
        "format": 2,
        "slug": "many-pages",
        "title": "t",
        "consent": {"text": "c"},
        "completion": {"code": "C"},
        "pools": [
            {
                "key": "p",
                "display": {"table": ["x"]},
                "subjects": [
                    {"id": f"s{i}", "features": {"x": 1}, "models": {"m": {"label": 1}}} for i in range(subjects)
                ],
            }
        ],
        "blocks": [{"key": "intro", "type": "instructions", "text": "x"}]
        + [{"key": f"b{i}", "type": "task", "task": "agree", "pool": "p", "model": "m"} for i in range(blocks)],
    }


def _never(*args, **kwargs):
    raise AssertionError("called while refusing a file for its page count")


def forbid_building(monkeypatch) -> None:
    """The page limit is checked from list lengths: no plan is built and no semantic check (whose cost
    grows with the pages) runs before the refusal."""
    import participation.assignment
    import participation.plan
    import studies.format2
    import studies.study_file

    for module, name in (
        (participation.plan, "plan_for"),
        (participation.assignment, "build_plan_v2"),
        (studies.format2, "_semantic_problems"),
        (studies.study_file, "_semantic_problems"),
    ):
        monkeypatch.setattr(module, name, _never)


@pytest.fixture
def counted_only(monkeypatch):
    forbid_building(monkeypatch)


def refusal(spec: dict) -> list[str]:
    with pytest.raises(InvalidStudyFile) as caught:
        validate_study(spec)
    return [str(p) for p in caught.value.problems]


def test_a_huge_plan_is_refused_from_its_counts_with_the_blocks_that_add_up(counted_only):
    spec = huge(1000, 1000)  # 1,000,001 pages in a 100 kB file
    problems = refusal(spec)
    assert problems == [
        "blocks: a participant would see 1,000,001 pages, more than the limit of 500 pages per participant "
        "(STUDY_MAX_PAGES_PER_PARTICIPANT); pages: blocks[1] (b0) 1,000, blocks[2] (b1) 1,000, blocks[3] (b2) 1,000, "
        "blocks[4] (b3) 1,000, blocks[5] (b4) 1,000, 996 more with 995,001. Show fewer items per participant or "
        "split the study"
    ]


def test_sampled_items_and_conditions_are_counted_per_participant(settings):
    spec = huge(3, 400)
    spec["conditions"] = [{"key": "a", "label": "A"}, {"key": "b", "label": "B"}]
    spec["blocks"][1]["assignment"] = {"per_participant": 100}
    spec["blocks"][2]["conditions"] = ["a"]
    spec["blocks"][3]["conditions"] = ["b"]
    assert refusal(spec) == [
        "blocks: a participant of condition 'a' would see 501 pages (as in 1 other condition), more than the limit "
        "of 500 pages per participant (STUDY_MAX_PAGES_PER_PARTICIPANT); pages: blocks[2] (b1) 400, "
        "blocks[1] (b0) 100, blocks[0] (intro) 1. Show fewer items per participant or split the study"
    ]
    settings.STUDY_MAX_PAGES_PER_PARTICIPANT = 501  # exactly the limit is allowed
    validated = validate_study(spec)
    assert {c: seen.pages for c, seen in condition_summaries(validated).items()} == {"a": 501, "b": 501}


def test_pair_distance_counts_one_page_per_measure(settings):
    spec = json.loads(EXAMPLE.read_text())
    settings.STUDY_MAX_PAGES_PER_PARTICIPANT = 15
    assert refusal(spec)[0].startswith("blocks: a participant of condition 'shown' would see 16 pages, more than")
    assert "blocks[6] (distance) 3" in refusal(spec)[0]  # 1 pair x 3 measures (the pool has series)


def test_format_1_counts_pairs_sets_checks_and_prompts(settings, monkeypatch):
    spec = json.loads(DEMO_FILE.read_text())
    settings.STUDY_MAX_PAGES_PER_PARTICIPANT = 43
    assert refusal(spec) == [
        "conditions[0]: a participant of condition 'arrests' would see 44 pages (as in 1 other condition), more than "
        "the limit of 43 pages per participant (STUDY_MAX_PAGES_PER_PARTICIPANT); pages: conditions[0].stimulus_sets "
        "39, attention_checks.items 3, instructions 1, conditions[0].disagreement_prompts 1. Show fewer items per "
        "participant or split the study"
    ]
    sets = spec["conditions"][0]["stimulus_sets"]
    spec["conditions"][0]["stimulus_sets"] = [{**copy.deepcopy(sets[i % 3]), "key": f"s{i}"} for i in range(3000)]
    settings.STUDY_MAX_PAGES_PER_PARTICIPANT = 500
    forbid_building(monkeypatch)
    (problem,) = refusal(spec)
    assert problem.startswith("conditions[0]: a participant of condition 'arrests' would see 39,005 pages")


@pytest.mark.parametrize("path", sorted(BUNDLED.glob("*.json")) + [EXAMPLE], ids=lambda p: p.name)
def test_the_counts_equal_the_plans_and_the_bundled_studies_fit(path):
    read = read_study_file(path)
    spec = stored_file(read)[0]  # a format 1 file runs as its conversion
    content = study_content(spec, spec_digest(spec))
    for ticket in range(2 * len(spec["conditions"])):
        key = condition_for(spec, ticket)
        pages = condition_summaries(spec)[key].pages
        if read["format"] == 1:
            assert pages_per_participant(read)[key] == pages
        assert pages == len(plan_for(spec, key, 3, item_choice(spec, content, ticket))) <= 100


@pytest.mark.django_db(transaction=True)
def test_the_upload_refuses_a_huge_plan_before_any_preview(client, researcher):
    client.force_login(researcher)
    raw = json.dumps(huge(1000, 1000)).encode()
    assert len(raw) > INLINE_MAX_BYTES  # checked by a background job (issue 22, finding 4), not in the request
    response = client.post("/researcher/upload/", {"file": SimpleUploadedFile("s.json", raw)})
    assert response.status_code == 302 and response["Location"].startswith("/researcher/jobs/")
    run_jobs()
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert "would see 1,000,001 pages, more than the limit of 500" in page.content.decode()


@pytest.mark.slow
def test_validation_cost_does_not_grow_with_blocks_times_pool_size(monkeypatch):
    """2,000 conditions, each with its own one-item block over one pool of 5,000 subjects: every
    participant sees one page, and the checks of the pool run once, not once per block."""
    spec = huge(2000, 5000)
    spec["conditions"] = [{"key": f"c{i}", "label": "C"} for i in range(2000)]
    spec["blocks"] = [
        {**block, "conditions": [f"c{i}"], "assignment": {"per_participant": 1, "stratify_by": "x"}}
        for i, block in enumerate(spec["blocks"][1:])
    ]
    import studies.format2
    import tasks.schema

    calls = {"model": 0, "strata": 0}

    def counting(name, original):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(tasks.schema, "_first_without", counting("model", tasks.schema._first_without))
    monkeypatch.setattr(studies.format2, "item_strata", counting("strata", studies.format2.item_strata))
    validated = validate_study(spec)
    assert calls == {"model": 1, "strata": 1}  # once for the pool, not once per block (2,000 before)
    assert validated["blocks"][5]["conditions"] == ["c5"]
