"""Answer-quality rules (research.quality) by hand-worked cases, the signals' parsing
(participation.signals) and their storage with the page's answers."""

import random
from datetime import UTC, datetime, timedelta

import pytest

from participation.page_load import measure_page_load
from participation.signals import parse_signals
from research.quality import (
    SOURCES,
    Evidence,
    ItemAnswer,
    VisitSignals,
    assess,
    burst_sizes,
    duplicate_counts,
    excluded_by_quality,
)


def rules(quality) -> dict:
    return {r.rule: r for r in quality.rules}


HUMAN = VisitSignals(seconds=9.0, focus_losses=0, pastes=0, pasted_chars=0, keystrokes=40, text_chars=35)


def test_a_careful_participant_is_not_flagged():
    quality = assess(
        Evidence((HUMAN, VisitSignals(seconds=4.0, focus_losses=1, pastes=0, pasted_chars=0, keystrokes=0))), {}
    )
    assert quality.flags == () and quality.score == 1.0
    found = {r.rule: r.value for r in quality.rules if r.value is not None}
    assert found == {"fast": 0.0, "pasted": 0, "away": 0.5, "untyped": 0}


def test_each_signal_rule_flags_by_hand():
    bot = VisitSignals(seconds=0.4, focus_losses=0, pastes=1, pasted_chars=300, keystrokes=0, text_chars=300)
    scripted = VisitSignals(seconds=0.2, focus_losses=2, pastes=0, pasted_chars=0, keystrokes=0, text_chars=12)
    quality = assess(Evidence((bot, scripted, HUMAN)), {})
    # fast: 2 of 3 pages under 2 s (> .5); pasted 300 >= 20; away: 1 of 3 pages (not > .5); untyped: 1 page
    assert quality.flags == ("fast", "pasted", "untyped") and quality.score == pytest.approx(1 / 4)
    assert excluded_by_quality(quality, {"quality": {"exclude_if": ["away", "untyped"]}})  # beside `fast`
    assert not excluded_by_quality(quality, {"quality": {"exclude_if": ["away"]}})
    assert not excluded_by_quality(quality, {})
    # thresholds come from the study file
    assert "fast" not in assess(Evidence((bot, scripted, HUMAN)), {"quality": {"fast_share": 0.7}}).flags
    assert "fast" not in assess(Evidence((bot, scripted, HUMAN)), {"quality": {"min_seconds_per_page": 0.1}}).flags


def test_a_client_reported_flag_alone_never_excludes():
    pasted = VisitSignals(seconds=30.0, focus_losses=5, pastes=1, pasted_chars=500, keystrokes=0, text_chars=500)
    filled = VisitSignals(seconds=30.0, focus_losses=1, pastes=0, pasted_chars=0, keystrokes=0, text_chars=50)
    quality = assess(Evidence((pasted, filled)), {})
    assert quality.flags == ("pasted", "away", "untyped")
    assert {SOURCES[rule] for rule in quality.flags} == {"client"}
    spec = {"quality": {"exclude_if": ["pasted", "away", "untyped"]}}
    assert not excluded_by_quality(quality, spec) and not excluded_by_quality(quality, spec, "flagged")
    # with a server-measured flag beside it, the study's named client rule excludes
    hurried = assess(Evidence((VisitSignals(seconds=1.0, pastes=1, pasted_chars=500, keystrokes=0, text_chars=5),)), {})
    assert "fast" in hurried.flags and excluded_by_quality(hurried, {"quality": {"exclude_if": ["pasted"]}})


def test_without_javascript_the_signals_are_unknown_never_suspicious():
    quality = assess(Evidence((VisitSignals(seconds=5.0), VisitSignals(seconds=6.0))), {})
    assert quality.flags == () and quality.score == 1.0  # only the server's clock is known
    assert [r.rule for r in quality.rules if r.flagged is not None] == ["fast"]
    assert assess(Evidence(), {}).score is None


def test_hurried_compares_the_time_on_a_page_with_its_load():
    # 100 words at 600 wpm = 10 s, 4 inputs x 0.5 s = 2 s: a page needs 12 s
    careful_bot = [VisitSignals(seconds=s, words=100, inputs=4) for s in (2.5, 4.0, 6.0, 13.0)]
    reader = [VisitSignals(seconds=s, words=100, inputs=4) for s in (12.5, 11.0, 30.0, 14.0)]
    assert rules(assess(Evidence(tuple(careful_bot)), {}))["hurried"].value == 0.75  # 3 of 4 under 12 s
    assert "hurried" in assess(Evidence(tuple(careful_bot)), {}).flags
    assert "fast" not in assess(Evidence(tuple(careful_bot)), {}).flags  # over 2 s: the old floor passes them
    assert rules(assess(Evidence(tuple(reader)), {}))["hurried"].value == 0.25
    assert "hurried" not in assess(Evidence(tuple(reader)), {}).flags
    slower = {"quality": {"skim_wpm": 1200, "seconds_per_input": 0}}  # 5 s a page
    assert rules(assess(Evidence(tuple(careful_bot)), slower))["hurried"].value == 0.5
    assert rules(assess(Evidence((VisitSignals(seconds=1.0),)), {}))["hurried"].flagged is None  # no load known


def test_clock_catches_a_client_claiming_more_time_than_the_server_saw():
    forged = VisitSignals(seconds=4.0, focus_losses=0, pastes=0, pasted_chars=0, keystrokes=30, text_chars=30)
    honest = VisitSignals(seconds=4.0, time_on_page_ms=3800, keystrokes=0, text_chars=0)
    claims = VisitSignals(seconds=4.0, time_on_page_ms=25000, keystrokes=0, text_chars=0)
    assert rules(assess(Evidence((forged,)), {}))["clock"].flagged is None
    assert rules(assess(Evidence((honest, honest)), {}))["clock"].value == 0
    assert rules(assess(Evidence((honest, claims)), {}))["clock"].value == 1
    assert "clock" in assess(Evidence((honest, claims)), {}).flags


def _numbers(measure: str, values, binary: bool = False) -> tuple[ItemAnswer, ...]:
    return tuple(ItemAnswer(measure, "b", f"s{i}", v, binary) for i, v in enumerate(values))


def test_straightline_is_the_longest_run_of_identical_answers_to_a_measure_of_more_than_two_values():
    varied = _numbers("confidence", [4, 4, 3, 4, 4, 4, 5, 4, 4, 4, 5, 5, 5])  # longest run 3
    straight = _numbers("confidence", [2, *[4] * 12, 3])  # 12 in a row
    yes = _numbers("agree", [1] * 20, binary=True)  # a yes/no series is never straight-lining
    assert rules(assess(Evidence(answers=varied + yes), {}))["straightline"].value == 3
    assert "straightline" in assess(Evidence(answers=straight), {}).flags
    assert rules(assess(Evidence(answers=yes), {}))["straightline"].flagged is None
    short = _numbers("confidence", [3] * 11)  # fewer answers than the run that flags: unknown
    assert rules(assess(Evidence(answers=short), {}))["straightline"].flagged is None
    assert "straightline" in assess(Evidence(answers=short), {"quality": {"max_identical_run": 11}}).flags
    assert "straightline" not in assess(Evidence(answers=straight), {"quality": {"max_identical_run": 13}}).flags


def test_inconsistent_counts_failed_attention_checks_and_repeated_items_answered_apart():
    attention = (ItemAnswer("attention", "attention_1", "", 1.0), ItemAnswer("attention", "attention_2", "", 0.0))
    repeat_close = (ItemAnswer("rating", "r", "s1", 3.0), ItemAnswer("rating", "r", "s1", 4.0))
    repeat_far = (ItemAnswer("rating", "r", "s2", 1.0), ItemAnswer("rating", "r", "s2", 5.0))
    assert rules(assess(Evidence(answers=repeat_close), {}))["inconsistent"].value == 0
    assert rules(assess(Evidence(answers=repeat_far + repeat_close), {}))["inconsistent"].value == 1
    assert rules(assess(Evidence(answers=attention + repeat_far), {}))["inconsistent"].value == 2
    assert rules(assess(Evidence(answers=_numbers("rating", [1, 2])), {}))["inconsistent"].flagged is None


def test_duplicate_texts_across_participants():
    template = "As an AI language model, I believe fairness requires careful consideration of context."
    texts = {
        1: [template],
        2: [template.replace("careful", "thoughtful")],  # a near-duplicate
        3: ["My neighbour lost a job because a computer said he was risky, so I worry."],
        4: ["No answer"],  # too short to compare
        5: ["as an ai language model i believe fairness requires careful consideration of context"],  # same
    }
    found = duplicate_counts(texts, min_chars=30, similarity=0.9)
    assert found == {1: 2, 2: 2, 3: 0, 5: 2}
    assert "duplicate_text" in assess(Evidence(duplicates=found[1]), {}).flags
    assert rules(assess(Evidence(duplicates=found[3]), {}))["duplicate_text"].flagged is False
    assert rules(assess(Evidence(), {}))["duplicate_text"].flagged is None


def test_bursts_count_arrivals_from_one_range_within_the_window():
    t0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
    arrivals = [(i, t0 + timedelta(minutes=2 * i), "farm") for i in range(6)]  # 0, 2, ..., 10 minutes
    arrivals += [(10, t0, "home"), (11, t0 + timedelta(minutes=30), "farm"), (12, t0, "")]
    found = burst_sizes(arrivals, minutes=10)
    assert found[0] == 6 and found[5] == 6 and found[10] == 1 and found[11] == 1 and 12 not in found
    assert burst_sizes(arrivals, minutes=3)[2] == 3  # 2, 4 and 6 minutes
    assert "burst" in assess(Evidence(burst=found[0]), {}).flags
    assert "burst" not in assess(Evidence(burst=found[0]), {"quality": {"burst_size": 7}}).flags


def test_page_load_counts_the_words_and_questions_of_main():
    html = """<html><head><title>Not counted</title></head><body><header>Page 3 of 9</header>
    <main><h1>Do you agree?</h1><p>The AI said: high risk.</p><script>var x = "no words";</script>
    <form><input type="hidden" name="page_key" value="k"><input type="radio" name="answer" value="1"> Yes
    <input type="radio" name="answer" value="0"> No <textarea name="why"></textarea>
    <button type="submit">Next</button></form></main></body></html>"""
    load = measure_page_load(html)
    assert load.words == 11 and load.inputs == 2  # Do you agree The AI said high risk Yes No Next; answer, why


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("v1:5230,1,0,0,42,3100,40", (5230, 1, 0, 0, 42, 3100, 40)),
        ("", None),
        ("v1:1,2,3", None),
        ("v2:1,2,3,4,5,6,7", None),
        ("v1:1,2,3,4,5,6,-7", None),
        ("v1:1,2,3,4,5,6,99999999999", None),
        ("v1:1,2,3,4,5,6,1e3", None),
    ],
)
def test_signals_are_parsed_or_unknown(raw, expected):
    parsed = parse_signals(raw)
    assert (parsed.values() if parsed else None) == expected


def test_duplicate_texts_added_in_steps_equal_those_found_at_once():
    """The dashboard's index adds texts as they arrive (``DuplicateTexts``): any split gives the counts of
    one pass over all of them, also when restricted to a subset of the participants."""
    from research.quality import DuplicateTexts

    WORDS = ["court", "risk", "judge", "bail", "score", "history", "age", "prior", "model", "unfair", "data", "group"]

    base = "I think the model should not use the neighbourhood of the defendant at all"
    rng = random.Random(4)
    texts = {pid: [base if rng.random() < 0.3 else " ".join(rng.choice(WORDS) for _ in range(12))] for pid in range(40)}
    texts[3].append(base.upper())
    texts[5] = ["short"]
    at_once = duplicate_counts(texts, min_chars=30, similarity=0.9)
    assert any(count >= 2 for count in at_once.values()) and any(count == 0 for count in at_once.values())
    steps = DuplicateTexts(min_chars=30, similarity=0.9)
    items = list(texts.items())
    for start in (0, 1, 17, 30):
        steps.add(dict(items[start : {0: 1, 1: 17, 17: 30, 30: 40}[start]]))
    assert steps.matches() == at_once
    among = set(range(0, 40, 2))
    assert steps.matches(among) == duplicate_counts(
        {p: t for p, t in texts.items() if p in among}, min_chars=30, similarity=0.9
    )
