"""The study dashboard's figures, from database aggregates and the answer-quality evidence
(``research.quality_evidence``: a handful of queries, never the export tables, so the dashboard stays fast
while participants are being served; no pandas, so a web worker serving it loads no scientific library)."""

import statistics
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, IntegerField, Max, Q, QuerySet, Sum, Window
from django.db.models.functions import Mod, RowNumber
from django.utils import timezone

from core import strict_json
from core.caching import BoundedCache
from participation.models import Participant
from participation.quotas import tally
from research.answer_rows import is_excluded
from research.participant_samples import FLAGS
from research.quality import CLIENT, SERVER, SOURCES, detection_checks, excluded_by_flags
from research.quality_evidence import completed_flags, completed_own_flags, free_text_questions
from studies.models import Study
from studies.quotas import quotas
from studies.study_file import QUALITY_RULES
from tasks.detection import CHECKS

NO_CONDITION = "(none)"
ARRIVALS_MIN_SPAN = timedelta(hours=1)  # the arrivals chart's shortest time axis
ARRIVALS_MAX_POINTS = 2000  # per condition: beyond it the step line keeps every k-th arrival and the last


@dataclass(frozen=True)
class StatusTable:
    """Participants per condition (rows, sorted) and status (columns, sorted); zero where none."""

    columns: list[str]
    rows: list[tuple[str, list[int]]]


@dataclass(frozen=True)
class StudyCounts:
    """Participants over every version, whatever the sample (the dashboard's pilot and status sections): pilots,
    and, pilots left out, those who completed and those who may still finish (arrived, active, timed out), as
    ``participation.recruitment`` counts them."""

    pilots: int
    completed: int
    in_progress: int


@dataclass(frozen=True)
class DashboardSummary:
    total: int
    by_condition_status: StatusTable
    completion_rate: float | None
    exclusion_rate: float | None
    median_minutes: float | None
    arrivals_figure_json: str  # "" when no one has arrived
    quality_flags: dict[str, int]  # completed participants each quality rule flags (research.quality)
    counts: StudyCounts

    @property
    def quality_rows(self) -> list[tuple[str, str, int]]:
        """(rule, who measured it: "server" or "browser (client-reported)", participants flagged)."""
        named = {SERVER: "server", CLIENT: "browser (client-reported)"}
        return [(rule, named[SOURCES[rule]], n) for rule, n in self.quality_flags.items()]


@dataclass(frozen=True)
class Group:
    """The participants of a study in one condition and status with the same sample flags
    (``research.participant_samples.FLAGS``): how many, the newest id, the latest arrival, consent, completion
    and withdrawal, and how many have both a consent and a completion time."""

    condition: str | None
    status: str
    flags: tuple[bool, ...]
    n: int
    last: int
    arrived: datetime | None
    consented: datetime | None
    completed: datetime | None
    withdrawn: datetime | None
    timed: int


@dataclass(frozen=True)
class StudyState:
    """What the dashboard's figures depend on: the versions' (id, file digest), the participants' groups and,
    when a version asks free-text questions (whose answers the near-duplicate rule compares), how far the
    participants got in all (every saved page moves a participant on); None otherwise, as no figure then
    changes with a saved page."""

    versions: tuple[tuple[int, str], ...]
    groups: tuple[Group, ...]
    position: int | None


_FIGURES: BoundedCache[tuple] = BoundedCache(96)  # each figure kept under the part of the state it depends on


def _groups(chosen: QuerySet[Participant]) -> tuple[Group, ...]:
    """:class:`Group` rows of ``chosen`` in one aggregate query (the ``participant_dashboard`` index holds
    every column it reads)."""
    has_times = Q(consented_at__isnull=False, completed_at__isnull=False)
    rows = (
        chosen.order_by()
        .values_list("condition__key", "status", *FLAGS)
        .annotate(
            n=Count("pk"),
            last=Max("pk"),
            arrived=Max("arrived_at"),
            consented=Max("consented_at"),
            completed=Max("completed_at"),
            withdrawn=Max("withdrawn_at"),
            timed=Count("pk", filter=has_times),
        )
    )
    width = len(FLAGS)
    return tuple(
        sorted(
            (Group(row[0], row[1], tuple(row[2 : 2 + width]), *row[2 + width :]) for row in rows),
            key=lambda g: (g.condition or "", g.status, g.flags),
        )
    )


def study_counts(groups: tuple[Group, ...]) -> StudyCounts:
    """The :class:`StudyCounts` of a study's groups (:attr:`StudyState.groups`): no query."""
    going_on = {Participant.Status.ARRIVED, Participant.Status.ACTIVE, Participant.Status.TIMED_OUT}
    pilot = FLAGS.index("pilot")
    real = [g for g in groups if not g.flags[pilot]]
    return StudyCounts(
        pilots=sum(g.n for g in groups if g.flags[pilot]),
        completed=sum(g.n for g in real if g.status == Participant.Status.COMPLETED),
        in_progress=sum(g.n for g in real if g.status in going_on),
    )


def study_state(slug: str) -> StudyState:
    """The :class:`StudyState` of the study ``slug``: two or three aggregate queries."""
    versions = tuple(Study.objects.filter(slug=slug).order_by("pk").values_list("pk", "spec_hash"))
    people = Participant.objects.filter(study_id__in=[pk for pk, _ in versions])
    specs = Study.objects.filter(slug=slug).values_list("spec", flat=True)
    texts = _kept((slug, "texts", versions), lambda: any(free_text_questions(spec) for spec in specs))
    position = (people.aggregate(total=Sum("position"))["total"] or 0) if texts else None
    return StudyState(versions, _groups(people), position)


def _sample(groups: tuple[Group, ...], chosen: QuerySet[Participant], participants: Q | None) -> tuple[Group, ...]:
    """The groups of the participants ``participants`` selects: the study's groups with those flags when it is
    a sample's filter (``research.participant_samples.sample_filter``: flags equal to values), else queried."""
    terms = participants.children if participants else []
    plain = not participants or (not participants.negated and participants.connector == Q.AND)
    if not plain or not all(isinstance(t, tuple) and t[0] in FLAGS and isinstance(t[1], bool) for t in terms):
        return _groups(chosen)
    wanted = {t[0]: t[1] for t in terms if isinstance(t, tuple)}
    return tuple(g for g in groups if all(g.flags[FLAGS.index(f)] == v for f, v in wanted.items()))


def _kept(key: tuple | bool, compute):
    """``compute()``, kept per process under ``key`` (False: computed every time)."""
    if not key:
        return compute()
    found = _FIGURES.get(key)
    return (found if found is not None else _FIGURES.put(key, (compute(),)))[0]


def summarise(slug: str, *, participants: Q | None = None) -> DashboardSummary:
    """:func:`summary` with each figure kept per process while the part of :func:`study_state` it depends on
    stays the same: a researcher's repeated views of a study of 20,000 participants read the state's aggregates;
    after a saved page nothing is computed again (in a study without free-text questions), after an arrival
    the arrivals chart and the quality flags, after a completion also the median time."""
    return summary(slug, participants=participants, keep=True)


def summary(slug: str, *, participants: Q | None = None, keep: bool = False) -> DashboardSummary:
    """Counts per condition and status, completion and exclusion rates, median time, arrivals chart,
    over every version of the study (``participants`` narrows to a sample); ``keep``: as :func:`summarise`.

    completion rate = completed / consented (active or completed); exclusion rate = excluded /
    completed, excluded meaning failed attention checks >= the version's ``exclude_if_failed`` or a
    quality flag the version excludes by (as in the export); median time over completed participants,
    consent to completion; completed participants flagged by each quality rule. Database aggregates and
    the completed participants' stored quality verdicts (``research.quality_evidence.completed_flags``): no
    query reads a row per participant.
    """
    state = study_state(slug)
    chosen = Participant.objects.filter(study_id__in=[pk for pk, _ in state.versions]).filter(participants or Q())
    groups = _sample(state.groups, chosen, participants)
    counts: dict[tuple[str, str], int] = {}
    for g in groups:
        key = (g.condition or NO_CONDITION, g.status)
        counts[key] = counts.get(key, 0) + g.n
    statuses = sorted({status for _, status in counts})
    table = StatusTable(
        columns=statuses,
        rows=[
            (condition, [counts.get((condition, status), 0) for status in statuses])
            for condition in sorted({condition for condition, _ in counts})
        ],
    )
    by_status = {status: sum(n for (_, s), n in counts.items() if s == status) for status in statuses}
    completed = by_status.get("completed", 0)
    consented = completed + by_status.get("active", 0)
    done = tuple(g for g in groups if g.status == Participant.Status.COMPLETED)
    lines: dict[str | None, tuple] = {}  # per condition: arrivals, newest id, latest arrival
    for g in groups:
        n, last, arrived = lines.get(g.condition, (0, 0, g.arrived))
        lines[g.condition] = (n + g.n, max(last, g.last), max(arrived, g.arrived))
    sample = (slug, str(participants))
    versions, finished = Study.objects.filter(slug=slug), chosen.filter(status=Participant.Status.COMPLETED)
    own = _kept(keep and (*sample, "own", state.versions, done), lambda: completed_own_flags(versions, finished))
    flagged = _kept(keep and (*sample, "quality", state), lambda: completed_flags(versions, finished, own))
    excluded = [
        pk for pk, f in flagged.items() if is_excluded(f.spec, f.attention_failed) or excluded_by_flags(f.flags, f.spec)
    ]
    per_rule = Counter(rule for f in flagged.values() for rule in f.flags)
    rules = _kept(keep and (slug, "rules", state.versions), lambda: _rules(slug))
    return DashboardSummary(
        total=sum(counts.values()),
        by_condition_status=table,
        completion_rate=completed / consented if consented else None,
        exclusion_rate=len(excluded) / completed if completed else None,
        median_minutes=_kept(
            keep and (*sample, "median", done), lambda: median_minutes(chosen, sum(g.timed for g in done))
        ),
        arrivals_figure_json=_kept(
            keep and (*sample, "arrivals", tuple(sorted(lines.items(), key=str)), int(time.time() // 60)),
            lambda: arrivals_figure(chosen),
        ),
        quality_flags={rule: per_rule[rule] for rule in rules},
        counts=study_counts(state.groups),
    )


def median_minutes(chosen: QuerySet[Participant], n: int) -> float | None:
    """The median of consent to completion, in minutes, over the ``n`` completed participants of ``chosen``
    with both times: the database orders the durations and returns the middle one or two (None: n = 0)."""
    if not n:
        return None
    done = chosen.filter(status=Participant.Status.COMPLETED, consented_at__isnull=False, completed_at__isnull=False)
    took = ExpressionWrapper(F("completed_at") - F("consented_at"), output_field=DurationField())
    middle = done.annotate(took=took).order_by("took").values_list("took", flat=True)[(n - 1) // 2 : n // 2 + 1]
    return statistics.mean(duration.total_seconds() / 60 for duration in middle)


@dataclass(frozen=True)
class QuotaFill:
    """One quota group's fill: its members (``participation.quotas.tally``) against its cap (None:
    no cap) and its minimum (0: none)."""

    question: str
    group: str
    filled: int
    cap: int | None
    minimum: int = 0

    @property
    def percent(self) -> int | None:
        return None if self.cap is None else round(100 * self.filled / self.cap)


def quota_fill(slug: str, spec: dict) -> list[QuotaFill]:
    """Each quota group of ``spec`` (the newest version's file) with its members over every version."""
    found = quotas(spec)
    counts = tally(slug, found) if found else {}
    return [QuotaFill(q.label, g.text, counts[q.label][0][g.text], g.cap, g.minimum) for q in found for g in q.groups]


def _rules(slug: str) -> list[str]:
    """The quality rules of the study's versions: the signal rules, and a detection check's only when one
    of its versions has a detection block of that check."""
    checks = {
        c
        for spec in Study.objects.filter(slug=slug).values_list("spec", flat=True)
        for c in detection_checks(spec).values()
    }
    return [rule for rule in QUALITY_RULES if rule not in CHECKS or rule in checks]


def arrivals_figure(chosen, now: datetime | None = None) -> str:
    """Plotly figure JSON: cumulative arrivals over time, one step line per condition; "" when no one
    has arrived (the dashboard says so instead of drawing empty axes). The count axis starts at 0 with
    whole-number ticks (one per participant below 10, each arrival marked); the time axis runs from
    the first arrival to now, at least an hour (Plotly's default around one arrival is a fraction of
    a second)."""
    # the thinned step line in the database: per condition, the k-th arrival (ROW_NUMBER) for every k-th one
    # and the last, k = ceil(arrivals / ARRIVALS_MAX_POINTS); at 20,000 arrivals the full line is a megabyte of
    # page for detail no screen shows
    line = [F("condition__key")]
    ranked = chosen.annotate(
        place=Window(RowNumber(), partition_by=line, order_by=[F("arrived_at").asc(), F("pk").asc()]),
        size=Window(Count("pk"), partition_by=line),
    )
    step = (F("size") + (ARRIVALS_MAX_POINTS - 1)) / ARRIVALS_MAX_POINTS
    skip = Mod(F("place") - 1, step, output_field=IntegerField())  # an integer: no cast to numeric per row
    kept = ranked.annotate(skip=skip).filter(Q(skip=0) | Q(place=F("size")))
    traces: dict[str, dict] = {}
    most = 0
    rows = kept.order_by().values_list("arrived_at", "pk", "condition__key", "place", "size")
    for arrived, _, condition, place, size in sorted(rows):  # the kept rows sorted here: the database sorts fewer
        name = condition or "(no condition yet)"
        trace = traces.setdefault(
            name, {"type": "scatter", "mode": "lines", "line": {"shape": "hv"}, "name": name, "x": [], "y": []}
        )
        trace["x"].append(arrived.isoformat())
        trace["y"].append(place)
        most = max(most, size)
    if not traces:
        return ""
    first = datetime.fromisoformat(min(trace["x"][0] for trace in traces.values()))
    end = max(now or timezone.now(), first + ARRIVALS_MIN_SPAN)
    if most < 10:  # a few arrivals: each one a visible point, not a step at the axis's edge
        for trace in traces.values():
            trace["mode"] = "lines+markers"
    return strict_json.dumps(
        {
            "data": list(traces.values()),
            "layout": {
                "title": {"text": "Arrivals over time (cumulative, by condition)"},
                "xaxis": {
                    "title": {"text": "Arrival time (UTC)"},
                    "type": "date",
                    "range": [first.isoformat(), end.isoformat()],
                },
                "yaxis": {
                    "title": {"text": "Participants"},
                    "rangemode": "tozero",
                    "tickformat": "d",
                    **({"dtick": 1, "range": [0, most + 0.5]} if most < 10 else {}),
                },
                "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
                "height": 320,
            },
        }
    )
