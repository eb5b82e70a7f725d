"""Per-participant answer quality: rules over what the server measured (its clock, the pages it served,
the answers, the study's other participants) and over what the page's script reported
(``participation.signals``). Each rule flags a participant, does not, or is unknown when none of the
participant's pages or answers carries what it needs; the quality score is the share of the known rules
that did not flag. A study excludes flagged participants with ``quality: {exclude_if: [rule, ...]}``, but a
rule the client reports (:data:`CLIENT`) excludes only a participant some server-measured rule flags too:
a browser's report can be forged or missing, so it never excludes anyone alone (:func:`excluded_by_quality`).

Server-measured (:data:`SERVER`; thresholds are the study file's ``quality`` options, defaults in
``DEFAULTS``):

- ``fast``: more than ``fast_share`` (0.5) of the pages were submitted within ``min_seconds_per_page`` (2 s)
  of being shown. Speeding: Greszki, Meyer & Schoen (2015), Public Opinion Quarterly 79(2); Westwood
  (2025, PNAS) on automated respondents.
- ``hurried``: more than ``hurried_share`` (0.5) of the pages with a known load were submitted sooner than
  their load allows: words shown / ``skim_wpm`` (600 words a minute, the top of skimming rates, Carver 1992,
  "Reading rate: theory, research and practical implications") + questions asked x ``seconds_per_input``
  (0.5 s, half the Keystroke-Level Model's 1.1 s to point at a target, Card, Moran & Newell 1980). The load
  is measured on the served page (``participation.page_load``).
- ``clock``: the page's script reported more time on a page than the server saw between showing it and
  receiving it (plus ``clock_slack_seconds``, 1 s): a browser cannot, a client that writes its own signals
  can. Unknown without signals.
- ``straightline``: the longest run of identical answers, in page order, to one measure with more than two
  values (confidence, ratings, predictions; not yes/no) reaches ``max_identical_run`` (12): LongString
  (Johnson 2005, "Ascertaining the validity of individual protocols from Web-based personality inventories",
  J. Research in Personality 39). Unknown when no such measure has that many answers.
- ``inconsistent``: attention checks answered wrongly plus repeated items (same measure and subject on two
  pages) answered more than ``repeat_tolerance`` (1) apart reach ``max_inconsistent`` (1). Unknown without
  attention checks or repeated items.
- ``duplicate_text``: a free text of ``min_text_chars`` (30) or more is the same as or nearly the same as
  (similarity >= ``near_duplicate`` 0.9, rapidfuzz's normalised Indel similarity after case folding and
  dropping punctuation) a free text of another participant of the study; language-model answers are
  homogeneous (Veselovsky et al. 2023). Unknown without such a text.
- ``burst``: ``burst_size`` (5) or more of the study's participants, this one included, arrived from the
  same address range (``participation.address_range``) within ``burst_minutes`` (10) of this one's
  arrival: a farm of scripted participants. Unknown without a stored range.
- ``hidden``, ``shibboleth``, ``copy``: one of the participant's detection items of that check
  (``tasks.detection``, which states each with its source) flagged their answer. Only for studies with
  such blocks; unknown until one is answered.

Client-reported (:data:`CLIENT`): ``pasted`` (at least ``min_pasted_chars``, 20, characters pasted into text
fields; Veselovsky, Ribeiro & West 2023), ``away`` (focus lost on more than ``away_share``, 0.5, of the pages
with signals) and ``untyped`` (a page sent with text in its text fields but no key pressed and nothing
pasted).
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from rapidfuzz import fuzz, process, utils

from studies.study_file import CLIENT_REPORTED_RULES, QUALITY_RULES
from tasks.detection import CHECKS

SERVER, CLIENT = "server", "client"
SOURCES = {rule: CLIENT if rule in CLIENT_REPORTED_RULES else SERVER for rule in QUALITY_RULES}
DEFAULTS = {
    "min_seconds_per_page": 2.0,
    "fast_share": 0.5,
    "skim_wpm": 600.0,
    "seconds_per_input": 0.5,
    "hurried_share": 0.5,
    "clock_slack_seconds": 1.0,
    "max_identical_run": 12,
    "repeat_tolerance": 1.0,
    "max_inconsistent": 1,
    "min_text_chars": 30,
    "near_duplicate": 0.9,
    "burst_size": 5,
    "burst_minutes": 10.0,
    "min_pasted_chars": 20,
    "away_share": 0.5,
}
NOT_ITEMS = ("questionnaire", "attention", "detection", "screening")  # measures that are no repeatable item


@dataclass(frozen=True)
class VisitSignals:
    """One submitted page: seconds from shown to submitted and the words and questions it showed (server),
    and the script's counts (client); None: unknown."""

    seconds: float | None
    focus_losses: int | None = None
    pastes: int | None = None
    pasted_chars: int | None = None
    keystrokes: int | None = None
    text_chars: int | None = None
    time_on_page_ms: int | None = None
    words: int | None = None
    inputs: int | None = None


@dataclass(frozen=True)
class ItemAnswer:
    """One numeric answer, in the order the pages were saved: its ``measure``, the item (``set_key``,
    ``subject_key``), whether that measure has only two values (``binary``) and the number."""

    measure: str
    set_key: str
    subject_key: str
    number: float
    binary: bool = False


@dataclass(frozen=True)
class Detected:
    """A participant's detection items of one check: how many were ``answered`` and how many ``flagged``."""

    answered: int = 0
    flagged: int = 0


@dataclass(frozen=True)
class Evidence:
    """What the rules look at for one participant: their submitted pages, numeric answers in page order,
    detection items per check, the other participants with a (near-)duplicate free text (None: no free
    text long enough) and the arrivals from their address range around theirs (None: no range stored)."""

    visits: tuple[VisitSignals, ...] = ()
    answers: tuple[ItemAnswer, ...] = ()
    detections: Mapping[str, Detected] = field(default_factory=dict)
    duplicates: int | None = None
    burst: int | None = None


@dataclass(frozen=True)
class RuleResult:
    rule: str
    value: float | None  # the measured share or count (None: unknown)
    threshold: float
    flagged: bool | None  # None: unknown

    @property
    def source(self) -> str:
        """``server`` when the server measured what the rule reads, ``client`` when the browser reported it."""
        return SOURCES[self.rule]


@dataclass(frozen=True)
class Quality:
    rules: tuple[RuleResult, ...]

    @cached_property
    def flags(self) -> tuple[str, ...]:
        return tuple(r.rule for r in self.rules if r.flagged)

    @property
    def score(self) -> float | None:
        """Share of the evaluable rules that did not flag (1 = no flag); None when none is evaluable."""
        known = [r for r in self.rules if r.flagged is not None]
        return sum(not r.flagged for r in known) / len(known) if known else None


def options(spec: dict) -> dict:
    """The study's quality thresholds (its ``quality`` options over ``DEFAULTS``)."""
    return {**DEFAULTS, **{k: v for k, v in spec.get("quality", {}).items() if k in DEFAULTS}}


def detection_checks(spec: dict) -> dict[str, str]:
    """Detection block key (its page's key) -> its check, for a format 2 study's detection blocks."""
    return {b["key"]: b["check"] for b in spec.get("blocks", []) if b["type"] == "detection"}


def detected(answers: Iterable[tuple[str, float | None]], spec: dict) -> dict[str, Detected]:
    """Check -> :class:`Detected` from a participant's detection answers, each (page key, stored flag)."""
    checks = detection_checks(spec)
    out: dict[str, Detected] = {}
    for page, flag in answers:
        seen = out.get(checks[page], Detected())
        out[checks[page]] = Detected(seen.answered + 1, seen.flagged + bool(flag))
    return out


def _result(rule: str, value: float | None, threshold: float, flagged: bool) -> RuleResult:
    return RuleResult(rule, value, threshold, None if value is None else flagged)


def _share(hits: list[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def longest_run(answers: Iterable[ItemAnswer]) -> int | None:
    """The longest run of identical consecutive answers to one measure with more than two values (None:
    no such answer)."""
    by_measure: dict[str, list[float]] = defaultdict(list)
    for a in answers:
        if not a.binary and a.measure not in NOT_ITEMS:
            by_measure[a.measure].append(a.number)
    best = None
    for numbers in by_measure.values():
        run = longest = 1
        for before, now in zip(numbers, numbers[1:], strict=False):
            run = run + 1 if now == before else 1
            longest = max(longest, run)
        best = max(best or 0, longest)
    return best


def inconsistencies(answers: Iterable[ItemAnswer], tolerance: float) -> int | None:
    """Attention checks failed plus repeated items answered more than ``tolerance`` apart (None: the
    participant answered no attention check and no item twice)."""
    answers = list(answers)
    checks = [a.number for a in answers if a.measure == "attention"]
    items: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for a in answers:
        if a.measure not in NOT_ITEMS and a.subject_key:
            items[(a.measure, a.set_key, a.subject_key)].append(a.number)
    repeated = [numbers for numbers in items.values() if len(numbers) > 1]
    if not checks and not repeated:
        return None
    return sum(n == 0 for n in checks) + sum(max(n) - min(n) > tolerance for n in repeated)


def assess(evidence: Evidence, spec: dict) -> Quality:
    """The participant's rule results (the module's rules, in ``QUALITY_RULES`` order; a detection check's
    only when the study has such blocks)."""
    limits = options(spec)
    pages = evidence.visits
    timed = [(v.seconds, v) for v in pages if v.seconds is not None]
    clocked = [(seconds, v.time_on_page_ms) for seconds, v in timed if v.time_on_page_ms is not None]
    seen = [v for v in pages if v.keystrokes is not None]
    with_text = [v for v in seen if v.text_chars]

    def minimum(v: VisitSignals) -> float:
        return (v.words or 0) * 60 / limits["skim_wpm"] + (v.inputs or 0) * limits["seconds_per_input"]

    fast = _share([seconds < limits["min_seconds_per_page"] for seconds, _ in timed])
    hurried = _share([seconds < minimum(v) for seconds, v in timed if v.words is not None and v.inputs is not None])
    slack = limits["clock_slack_seconds"]
    clock = sum(ms / 1000 > seconds + slack for seconds, ms in clocked) if clocked else None
    long_enough = _most_answers(evidence) >= limits["max_identical_run"]
    straight = longest_run(evidence.answers) if long_enough else None
    inconsistent = inconsistencies(evidence.answers, limits["repeat_tolerance"])
    pasted = sum(v.pasted_chars or 0 for v in seen) if seen else None
    away = _share([bool(v.focus_losses) for v in seen])
    untyped = sum(not v.keystrokes and not v.pastes for v in with_text) if with_text else None
    found = {
        "fast": _result("fast", fast, limits["fast_share"], (fast or 0) > limits["fast_share"]),
        "hurried": _result("hurried", hurried, limits["hurried_share"], (hurried or 0) > limits["hurried_share"]),
        "clock": _result("clock", clock, 1, (clock or 0) >= 1),
        "straightline": _result(
            "straightline", straight, limits["max_identical_run"], (straight or 0) >= limits["max_identical_run"]
        ),
        "inconsistent": _result(
            "inconsistent", inconsistent, limits["max_inconsistent"], (inconsistent or 0) >= limits["max_inconsistent"]
        ),
        **comparison_results(evidence.duplicates, evidence.burst, limits),
        "pasted": _result("pasted", pasted, limits["min_pasted_chars"], (pasted or 0) >= limits["min_pasted_chars"]),
        "away": _result("away", away, limits["away_share"], (away or 0) > limits["away_share"]),
        "untyped": _result("untyped", untyped, 1, (untyped or 0) >= 1),
    }
    used = set(detection_checks(spec).values())
    for check in (c for c in CHECKS if c in used):
        d = evidence.detections.get(check, Detected())
        found[check] = _result(check, d.flagged if d.answered else None, 1, bool(d.flagged))
    return Quality(tuple(found[rule] for rule in QUALITY_RULES if rule in found))


def comparison_results(duplicates: int | None, burst: int | None, limits: dict) -> dict[str, RuleResult]:
    """The two rules that compare a participant with the study's others (``duplicate_text``, ``burst``),
    from the counts :func:`duplicate_counts` and :func:`burst_sizes` give and the study's ``options``."""
    return {
        "duplicate_text": _result("duplicate_text", duplicates, 1, (duplicates or 0) >= 1),
        "burst": _result("burst", burst, limits["burst_size"], (burst or 0) >= limits["burst_size"]),
    }


def comparison_flags(duplicates: int | None, burst: int | None, limits: dict) -> set[str]:
    """The comparison rules (:func:`comparison_results`) that flag a participant with these counts, under
    the study's ``options``."""
    return {rule for rule, result in comparison_results(duplicates, burst, limits).items() if result.flagged}


def with_comparisons(quality: Quality, duplicates: int | None, burst: int | None, spec: dict) -> Quality:
    """``quality`` with its comparison rules (:func:`comparison_results`) assessed on these counts, the
    other rules as they were: a participant's own rules need their pages and answers, which never change
    once they completed; the comparisons change with every arrival."""
    fresh = comparison_results(duplicates, burst, options(spec))
    return Quality(tuple(fresh.get(result.rule, result) for result in quality.rules))


def _most_answers(evidence: Evidence) -> int:
    """The most answers the participant gave to one measure with more than two values (``straightline`` is
    unknown until one measure has ``max_identical_run`` of them)."""
    counts: dict[str, int] = defaultdict(int)
    for a in evidence.answers:
        if not a.binary and a.measure not in NOT_ITEMS:
            counts[a.measure] += 1
    return max(counts.values(), default=0)


def duplicate_counts(texts: Mapping[int, Iterable[str]], *, min_chars: int, similarity: float) -> dict[int, int]:
    """Participant -> how many other participants wrote a free text the same as or nearly the same as one of
    theirs (rapidfuzz ``fuzz.ratio`` on case-folded texts without punctuation >= ``similarity``); only
    participants with a text of ``min_chars`` or more characters appear."""
    found = DuplicateTexts(min_chars=min_chars, similarity=similarity)
    found.add(texts)
    return found.matches()


class DuplicateTexts:
    """:func:`duplicate_counts` kept up to date as texts arrive: each added text is compared once with every
    text before it (the similarity is symmetric), so adding m texts to n costs about m x n comparisons, not
    a new (n + m)^2 / 2. Not thread-safe: the caller holds it under a lock."""

    def __init__(self, *, min_chars: int, similarity: float) -> None:
        self.min_chars, self.cutoff = min_chars, 100 * similarity
        self._owners: list[int] = []
        self._cleaned: list[str] = []
        self._matches: dict[int, set[int]] = {}

    def add(self, texts: Mapping[int, Iterable[str]]) -> None:
        for pid, found in texts.items():
            for text in found:
                norm = utils.default_process(text)
                if len(norm) < self.min_chars:
                    continue
                mine = self._matches.setdefault(pid, set())
                for _, _, j in process.extract(
                    norm, self._cleaned, scorer=fuzz.ratio, score_cutoff=self.cutoff, limit=None
                ):
                    other = self._owners[j]
                    if other != pid:
                        mine.add(other)
                        self._matches[other].add(pid)
                self._owners.append(pid)
                self._cleaned.append(norm)

    @property
    def has_matches(self) -> bool:
        """Whether any two participants' texts match."""
        return any(self._matches.values())

    def matches(self, among: set[int] | None = None) -> dict[int, int]:
        """Participant -> how many other participants' texts match theirs (:func:`duplicate_counts`),
        counting only participants ``among`` (default: all) on both sides."""
        if among is None:
            return {pid: len(others) for pid, others in self._matches.items()}
        return {pid: len(others & among) for pid, others in self._matches.items() if pid in among}


def burst_sizes(arrivals: Iterable[tuple[int, datetime, str]], minutes: float) -> dict[int, int]:
    """Participant -> the arrivals from their address range (theirs included) within ``minutes`` of theirs,
    from (participant, arrived_at, range hash) rows; participants without a range do not appear."""
    by_range: dict[str, list[tuple[datetime, int]]] = defaultdict(list)
    for pid, at, network in arrivals:
        if network:
            by_range[network].append((at, pid))
    window, out = timedelta(minutes=minutes), {}
    for rows in by_range.values():
        rows.sort()
        low = high = 0
        for at, pid in rows:  # two pointers over the sorted arrivals: those within the window around ``at``
            while rows[low][0] < at - window:
                low += 1
            while high < len(rows) and rows[high][0] <= at + window:
                high += 1
            out[pid] = high - low
    return out


# Which quality flags exclude a participant: those the study's ``quality.exclude_if`` names ("study", the
# default), none ("none": every participant kept, the sensitivity analysis's "all"), or any ("flagged": its
# "without_flagged"); in every mode a client-reported flag counts only beside a server-measured one.
EXCLUSION_MODES = ("study", "none", "flagged")


def excluded_by_quality(quality: Quality, spec: dict, mode: str = "study") -> bool:
    """Whether the participant is excluded for answer quality under ``mode`` (:data:`EXCLUSION_MODES`):
    by default when the study's ``quality.exclude_if`` names one of the participant's flags, and only if a
    server-measured rule flags them (a client-reported flag alone never excludes)."""
    return excluded_by_flags(quality.flags, spec, mode)


def excluded_by_flags(flags: Iterable[str], spec: dict, mode: str = "study") -> bool:
    """:func:`excluded_by_quality` of a participant with these flags."""
    if mode not in EXCLUSION_MODES:
        raise ValueError(f"quality exclusion must be one of {list(EXCLUSION_MODES)}, got {mode!r}")
    flags = set(flags)
    if mode == "none" or not any(SOURCES[rule] == SERVER for rule in flags):
        return False
    named = flags if mode == "flagged" else set(spec.get("quality", {}).get("exclude_if", ()))
    return bool(named & flags)
