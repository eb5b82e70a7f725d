"""Answer-quality rules (research.quality) by hand-worked cases, the signals' parsing
(participation.signals) and their storage with the page's answers."""

import pytest

from participation.signals import parse_signals
from research.quality import VisitSignals, counts, excluded_by_quality
from research.quality import assess as assess_counts


def assess(visits, spec):
    return assess_counts(counts(visits, spec), spec)


HUMAN = VisitSignals(seconds=9.0, focus_losses=0, pastes=0, pasted_chars=0, keystrokes=40, text_chars=35)


def test_a_careful_participant_is_not_flagged():
    quality = assess([HUMAN, VisitSignals(seconds=4.0, focus_losses=1, pastes=0, pasted_chars=0, keystrokes=0)], {})
    assert quality.flags == () and quality.score == 1.0
    assert {r.rule: r.value for r in quality.rules} == {"fast": 0.0, "pasted": 0, "away": 0.5, "untyped": 0}


def test_each_rule_flags_by_hand():
    bot = VisitSignals(seconds=0.4, focus_losses=0, pastes=1, pasted_chars=300, keystrokes=0, text_chars=300)
    scripted = VisitSignals(seconds=0.2, focus_losses=2, pastes=0, pasted_chars=0, keystrokes=0, text_chars=12)
    quality = assess([bot, scripted, HUMAN], {})
    # fast: 2 of 3 pages under 2 s (> .5); pasted 300 >= 20; away: 1 of 3 pages (not > .5); untyped: 1 page
    assert quality.flags == ("fast", "pasted", "untyped") and quality.score == pytest.approx(1 / 4)
    assert excluded_by_quality(quality, {"quality": {"exclude_if": ["away", "untyped"]}})
    assert not excluded_by_quality(quality, {"quality": {"exclude_if": ["away"]}})
    assert not excluded_by_quality(quality, {})
    # thresholds come from the study file
    assert "fast" not in assess([bot, scripted, HUMAN], {"quality": {"fast_share": 0.7}}).flags
    assert "fast" not in assess([bot, scripted, HUMAN], {"quality": {"min_seconds_per_page": 0.1}}).flags


def test_without_javascript_the_signals_are_unknown_never_suspicious():
    quality = assess([VisitSignals(seconds=5.0), VisitSignals(seconds=6.0)], {})
    assert quality.flags == () and quality.score == 1.0  # only the server's clock is known
    assert [r.flagged for r in quality.rules] == [False, None, None, None]
    assert assess([], {}).score is None


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
