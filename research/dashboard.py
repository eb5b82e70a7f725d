"""The study dashboard's figures, from database aggregates and the answer-quality evidence
(``research.quality_evidence``: a handful of queries, never the export tables, so the dashboard stays fast
while participants are being served; no pandas, so a web worker serving it loads no scientific library)."""

import statistics
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from core import strict_json
from core.caching import BoundedCache
from participation.models import Answer, Participant
from participation.quotas import tally
from research.quality import CLIENT, SERVER, SOURCES, detection_checks, excluded_by_flags
from research.quality_evidence import database_flags
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
class DashboardSummary:
    total: int
    by_condition_status: StatusTable
    completion_rate: float | None
    exclusion_rate: float | None
    median_minutes: float | None
    arrivals_figure_json: str  # "" when no one has arrived
    quality_flags: dict[str, int]  # completed participants each quality rule flags (research.quality)

    @property
    def quality_rows(self) -> list[tuple[str, str, int]]:
        """(rule, who measured it: "server" or "browser (client-reported)", participants flagged)."""
        named = {SERVER: "server", CLIENT: "browser (client-reported)"}
        return [(rule, named[SOURCES[rule]], n) for rule, n in self.quality_flags.items()]


_SUMMARIES: BoundedCache[DashboardSummary] = BoundedCache(32)


def study_state(slug: str) -> tuple:
    """What the dashboard's figures depend on, in two aggregate queries: the versions' files and, over every
    participant of the study, how many, the newest id, how far they got in all (every saved page moves a
    participant on; answers are only added with a page or deleted with their participant), how many in
    each status, pilots and simulated ones, and the latest consent, completion and withdrawal."""
    versions = tuple(Study.objects.filter(slug=slug).order_by("pk").values_list("pk", "spec_hash"))
    status = {f"n_{value}": Count("pk", filter=Q(status=value)) for value in Participant.Status.values}
    people = Participant.objects.filter(study__slug=slug).aggregate(
        n=Count("pk"),
        last=Max("pk"),
        position=Sum("position"),
        pilots=Count("pk", filter=Q(pilot=True)),
        simulated=Count("pk", filter=Q(simulated=True)),
        consented=Max("consented_at"),
        completed=Max("completed_at"),
        withdrawn=Max("withdrawn_at"),
        **status,
    )
    return versions, tuple(people.items())


def summarise(slug: str, *, participants: Q | None = None) -> DashboardSummary:
    """:func:`summary` kept per process while :func:`study_state` and the minute stay the same (the arrivals
    chart's time axis ends now): a researcher's repeated views of a study of 20,000 participants read two
    aggregates; the first view after any change computes the figures again."""
    key = (slug, str(participants), study_state(slug), int(time.time() // 60))
    found = _SUMMARIES.get(key)
    return found if found is not None else _SUMMARIES.put(key, summary(slug, participants=participants))


def summary(slug: str, *, participants: Q | None = None) -> DashboardSummary:
    """Counts per condition and status, completion and exclusion rates, median time, arrivals chart,
    over every version of the study (``participants`` narrows to a sample).

    completion rate = completed / consented (active or completed); exclusion rate = excluded /
    completed, excluded meaning failed attention checks >= the version's ``exclude_if_failed`` or a
    quality flag the version excludes by (as in the export); median time over completed participants,
    consent to completion; completed participants flagged by each quality rule.
    """
    chosen = Participant.objects.filter(study__slug=slug).filter(participants or Q())
    counts: dict[tuple[str, str], int] = {}
    for row in chosen.values("condition__key", "status").annotate(n=Count("id")):
        key = (row["condition__key"] or NO_CONDITION, row["status"])
        counts[key] = counts.get(key, 0) + row["n"]
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

    done = chosen.filter(status=Participant.Status.COMPLETED, consented_at__isnull=False, completed_at__isnull=False)
    minutes = [
        (end - start).total_seconds() / 60
        for start, end in done.values_list("consented_at", "completed_at")
        if start is not None and end is not None  # the filter above: never None here
    ]
    flagged = database_flags(Study.objects.filter(slug=slug), chosen.filter(status=Participant.Status.COMPLETED))
    quality_excluded = {pk for pk, (flags, spec) in flagged.items() if excluded_by_flags(flags, spec)}
    per_rule = Counter(rule for flags, _ in flagged.values() for rule in flags)
    return DashboardSummary(
        total=sum(counts.values()),
        by_condition_status=table,
        completion_rate=completed / consented if consented else None,
        exclusion_rate=len(_excluded(slug, chosen) | quality_excluded) / completed if completed else None,
        median_minutes=statistics.median(minutes) if minutes else None,
        arrivals_figure_json=arrivals_figure(chosen),
        quality_flags={rule: per_rule[rule] for rule in _rules(slug)},
    )


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


def _excluded(slug: str, chosen) -> set[int]:
    """Completed participants whose failed attention checks reach their version's threshold (the format 2
    file's ``attention.exclude_if_failed``; a format 1 file is stored as its conversion)."""
    thresholds = dict(Study.objects.filter(slug=slug).values_list("pk", "spec__attention__exclude_if_failed"))
    failures = (
        Answer.objects.filter(
            participant__in=chosen.filter(status=Participant.Status.COMPLETED), measure="attention", number=0
        )
        .values("participant_id", "participant__study_id")
        .annotate(failed=Count("id"))
    )
    return {row["participant_id"] for row in failures if row["failed"] >= int(thresholds[row["participant__study_id"]])}


def _rules(slug: str) -> list[str]:
    """The quality rules of the study's versions: the signal rules, and a detection check's only when one
    of its versions has a detection block of that check."""
    checks = {
        c
        for spec in Study.objects.filter(slug=slug).values_list("spec", flat=True)
        for c in detection_checks(spec).values()
    }
    return [rule for rule in QUALITY_RULES if rule not in CHECKS or rule in checks]


def _thin(trace: dict) -> None:
    """Keep at most about :data:`ARRIVALS_MAX_POINTS` points of a cumulative step line: every k-th arrival
    and the last, each with its exact count (at 20,000 arrivals the full line is a megabyte of page for
    detail no screen shows)."""
    n = len(trace["y"])
    if n <= ARRIVALS_MAX_POINTS:
        return
    step = -(-n // ARRIVALS_MAX_POINTS)
    keep = [*range(0, n - 1, step), n - 1]
    trace["x"] = [trace["x"][i] for i in keep]
    trace["y"] = [trace["y"][i] for i in keep]


def arrivals_figure(chosen, now: datetime | None = None) -> str:
    """Plotly figure JSON: cumulative arrivals over time, one step line per condition; "" when no one
    has arrived (the dashboard says so instead of drawing empty axes). The count axis starts at 0 with
    whole-number ticks (one per participant below 10, each arrival marked); the time axis runs from
    the first arrival to now, at least an hour (Plotly's default around one arrival is a fraction of
    a second)."""
    traces: dict[str, dict] = {}
    arrivals = chosen.order_by("arrived_at", "pk").values_list("arrived_at", "condition__key")
    for arrived, condition in arrivals:
        name = condition or "(no condition yet)"
        trace = traces.setdefault(
            name, {"type": "scatter", "mode": "lines", "line": {"shape": "hv"}, "name": name, "x": [], "y": []}
        )
        trace["x"].append(arrived.isoformat())
        trace["y"].append(len(trace["y"]) + 1)
    if not traces:
        return ""
    first = datetime.fromisoformat(min(trace["x"][0] for trace in traces.values()))
    end = max(now or timezone.now(), first + ARRIVALS_MIN_SPAN)
    most = max(len(trace["y"]) for trace in traces.values())
    for trace in traces.values():
        _thin(trace)
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
