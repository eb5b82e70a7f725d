"""The design check of any study (``plan_study --study-file``, the builder): can the analysis estimate
what the study asks, overall and per rater group, at the planned number of participants?

One replication simulates the built study as it will run: ``participants`` consenting participants take
tickets 0, 1, 2, ... (``participation.assignment``: their condition and, for a block with
``assignment.per_participant``, the balanced items of their rank; an adaptive block's slots get items drawn
at random from those the participant has not seen, a stand-in for the adaptive choice, which needs the fit
of answers stored so far), each a rater drawn by ``simulation.raters.draw_rater`` (the study's first
single-choice question carries the planted group difference, ``default_group_effects``) whose answers to
every page come from the page's task type (``TaskType.simulate``, through the registry) and are read by the
page's own form. The answers and questionnaire tables (the export's columns, ``research.answer_rows``) go
through the analysis the report runs (``runs.design_analysis.analyze_design``, split by ``by``).

Per block, per estimate of its task type's report tables (``ReportTable.estimate``) and per rater group
(and all participants): ``identified`` = share of the replications whose table holds a finite estimate for
the group (an estimator that refuses, e.g. Bradley-Terry's "the maximum likelihood strengths are infinite",
or a group too small to compare, counts as not identified), ``ci_width`` = the median width of its 95%
intervals over rows and replications. A block whose task type has no analysis gets its reason.

Advice (:func:`check_design`): where an estimate is identified in fewer than ``IDENTIFIED_SHARE`` of the
replications, the check re-runs the study at ``participants`` x 1.5, 2, 3, 4, 6, 8 until it is; n* the
first size that suffices. Identification depends on the judgements each item gets per group,
n M / (G K) (M items per participant, G groups, K items), so with the planned n the same rate needs
K n / n* items: for a builder's design, whose items grow with its subjects, at most S n / n* subjects.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.utils.datastructures import MultiValueDict

from fairness.rater_groups import ALL
from participation.assignment import condition_for, item_choice
from participation.pages import condition_index, form_answers, page_form
from participation.plan import plan_for
from research.answer_rows import participant_answer_rows, references_of
from runs.design_analysis import analyze_design
from simulation.raters import default_group_effects, draw_rater
from studies.content import study_content
from studies.format2 import check_by
from studies.services import spec_digest
from tasks import block_task, task_for

DEFAULT_REPLICATIONS = 3
IDENTIFIED_SHARE = 0.8  # an estimate fitting in fewer of the replications is "not estimable"
SEARCH_FACTORS = (1.5, 2, 3, 4, 6, 8)  # the larger studies tried for advice, x the planned participants
N_RESAMPLES = 100  # bootstrap resamples and permutations of the simulated analyses (widths, not p-values)


@dataclass(frozen=True)
class EstimateCheck:
    """One estimate of one block for one rater group (:data:`fairness.rater_groups.ALL`: every participant):
    the share of replications in which it was estimated, the median CI width (NaN: no interval or never
    estimated) and why it was not, when it was not (the most common reason)."""

    block: str
    task: str
    table: str
    estimate: str
    rater_group: str
    identified: float
    ci_width: float
    reason: str = ""


@dataclass(frozen=True)
class DesignCheck:
    """The check of one study file at ``participants`` participants split by ``by`` (module doc)."""

    slug: str
    participants: int
    by: tuple[str, ...]
    replications: int
    seed: int
    seconds: float
    blocks: tuple[dict, ...]  # key, task, assignment (a sentence), items, per_participant
    rows: tuple[EstimateCheck, ...]
    warnings: tuple[str, ...] = ()
    n_groups: int = 1
    advice: dict = field(default_factory=dict)  # participants_needed, subjects_at_most (None: not found)

    def summary(self) -> str:
        """The check as text: the design, one line per estimate and rater group, the warnings."""
        groups = f"{self.n_groups} rater groups ({' / '.join(self.by)})" if self.by else "one rater group"
        lines = [
            f"Design check of {self.slug}: {self.replications} simulated runs of {self.participants} participants in "
            f"{groups} (seed {self.seed}; {self.seconds:.1f} s)."
        ]
        for block in self.blocks:
            lines.append(
                f"  block {block['block']} ({block['task']}): {block['items']} items, {block['per_participant']} per "
                f"participant, {block['assignment']}"
            )
        lines.append("identified: share of runs in which the estimate was computed; ci_width: median 95% CI width")
        for row in self.rows:
            width = f"{row.ci_width:.3g}" if math.isfinite(row.ci_width) else "-"
            name = f"{row.table}.{row.estimate}" if row.table else "(no analysis)"
            why = f"  ({row.reason})" if row.reason and row.identified < 1 else ""
            lines.append(
                f"  {row.block:<14} {name:<28} {row.rater_group:<28} identified {row.identified:4.0%}  "
                f"ci_width {width}{why}"
            )
        lines += [f"Warning: {w}" for w in self.warnings] or ["No warning: every estimate is identified at this size."]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """results.json / ``plan_study --json``: finite numbers or None (never NaN)."""
        return {
            "slug": self.slug,
            "participants": self.participants,
            "by": list(self.by),
            "replications": self.replications,
            "seed": self.seed,
            "seconds": round(self.seconds, 2),
            "rater_groups": self.n_groups,
            "blocks": list(self.blocks),
            "estimates": [
                {
                    **{k: getattr(row, k) for k in ("block", "task", "table", "estimate", "rater_group", "reason")},
                    "identified": row.identified,
                    "ci_width": row.ci_width if math.isfinite(row.ci_width) else None,
                }
                for row in self.rows
            ],
            "warnings": list(self.warnings),
            "advice": self.advice,
        }


@dataclass
class _Participant:
    """What ``research.answer_rows.participant_answer_rows`` reads of a participant."""

    plan: list[dict]


@dataclass(frozen=True)
class _Answer:
    page: str
    question: str
    measure: str
    subject: str
    number: float | None
    text: str


def _post(data: dict) -> MultiValueDict:
    return MultiValueDict({k: [str(x) for x in v] if isinstance(v, list) else [str(v)] for k, v in data.items()})


def _slot_item(page: dict, content, seen: set[str], rng: np.random.Generator) -> dict:
    """An adaptive slot page with an item drawn at random among those the participant has not seen."""
    left = [item for item in content.items(page["block"]) if item not in seen]
    item = left[int(rng.integers(len(left)))]
    seen.add(item)
    return {**page, "item": item}


def simulate_study(spec: dict, participants: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One simulated run of the stored (format 2) study ``spec`` (module doc): its answers table (the export's
    columns) and questionnaire table (participant_id and the rater's single-choice answers)."""
    digest = spec_digest(spec)
    content = study_content(spec, digest)
    effects = default_group_effects(spec)
    references = references_of(spec)
    rows: list[dict] = []
    people: list[dict] = []
    for ticket in range(participants):
        condition = condition_for(spec, ticket)
        plan = plan_for(spec, condition, int(rng.integers(2**62)), item_choice(spec, content, ticket), content)
        index = condition_index(spec, digest, condition)
        rater = draw_rater(spec, effects, rng)
        answers, seen, pages = [], set(), []
        for planned in plan:
            page = _slot_item(planned, content, seen, rng) if "slot" in planned else planned
            pages.append(page)
            form = page_form(page, index, data=_post(task_for(page).simulate(page, index, rater, rng)))
            if not form.is_valid():
                raise RuntimeError(f"simulated answer refused on {page['key']}: {form.errors.as_text()}")
            answers += [
                _Answer(page["key"], a.question, a.measure, a.subject_key, a.number, a.text)
                for a in form_answers(page, index, form)
            ]
            if task_for(page).screens_out(form):
                break
        pid = f"sim-{ticket}"
        base = {"participant_id": pid, "study": spec["slug"], "study_version": 1, "condition": condition}
        rows += participant_answer_rows(base, spec, references, _Participant(pages), answers, 0)
        people.append({"participant_id": pid, **rater.group})
    return pd.DataFrame(rows), pd.DataFrame(people)


def _estimates(spec: dict, analysis, groups: Sequence[str]) -> dict[tuple, tuple[bool, list[float], str]]:
    """(block, table, estimate, rater group) -> (estimated, its CI widths, why not) in one analysed replication."""
    out: dict[tuple, tuple[bool, list[float], str]] = {}
    blocks = {b["key"]: b for b in spec["blocks"]}
    for result in analysis.blocks:
        task = block_task(blocks[result.block])
        why = " ".join(result.notes)
        if not task.analysis:
            out[(result.block, "", "", ALL)] = (False, [], task.no_analysis)
            continue
        for name, table in task.report_tables.items():
            if not table.estimate:
                continue
            frame = result.tables.get(name)
            view = task.present(name, frame).frame if frame is not None and len(frame) else pd.DataFrame()
            for group in (ALL, *groups):
                if "rater_group" in view.columns:
                    rows = view[view["rater_group"] == group]
                else:
                    rows = view if group == ALL else pd.DataFrame()
                values = pd.to_numeric(rows.get(table.estimate, pd.Series(dtype=float)), errors="coerce")
                estimated = bool(np.isfinite(values.to_numpy(float)).any())
                widths: list[float] = []
                if estimated and {"ci_low", "ci_high"} <= set(rows.columns):
                    width = (
                        pd.to_numeric(rows["ci_high"], errors="coerce") - pd.to_numeric(rows["ci_low"], errors="coerce")
                    ).to_numpy(float)
                    widths = [float(w) for w in width if np.isfinite(w) and w > 0]
                note = ""
                if not estimated:
                    note = (
                        next((str(n) for n in rows.get("note", []) if isinstance(n, str) and n), "")
                        or _group_reason(analysis, group)
                        or why
                    )
                out[(result.block, name, table.estimate, group)] = (estimated, widths, note)
    return out


def _group_reason(analysis, group: str) -> str:
    sizes = analysis.rater_groups
    row = sizes[sizes["rater_group"] == group]
    if len(row) and row["status"].iloc[0] != "compared":
        return f"{row['status'].iloc[0]} ({int(row['n_participants'].iloc[0])} participants)"
    return "no answers from this group" if len(row) == 0 and group != ALL else ""


def _group_labels(spec: dict, by: tuple[str, ...]) -> list[str]:
    """Every rater group the questions ``by`` make (single-choice options; their combinations joined)."""
    from studies.format2 import questionnaire_questions

    questions = questionnaire_questions(spec)
    labels = [""]
    for key in by:
        options = questions[key].get("options", []) if questions[key]["type"] == "single_choice" else []
        if not options:
            raise ValueError(f"--by {key!r}: the design check splits by single-choice questions only")
        labels = [f"{head} / {option}" if head else option for head in labels for option in options]
    return labels if by else []


def run_check(
    spec: dict,
    *,
    participants: int,
    by: Sequence[str] = (),
    replications: int = DEFAULT_REPLICATIONS,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[EstimateCheck], tuple[dict, ...]]:
    """The estimates' verdicts for ``replications`` simulated runs of ``participants`` (module doc)."""
    by = check_by(spec, by)
    groups = _group_labels(spec, by)
    found: dict[tuple, list[tuple[bool, list[float], str]]] = {}
    for r in range(replications):
        answers, questionnaire = simulate_study(spec, participants, np.random.default_rng([seed, r]))
        analysis = analyze_design(
            spec, answers, questionnaire, by=by, seed=seed + r, n_resamples=N_RESAMPLES, n_permutations=N_RESAMPLES
        )
        for key, value in _estimates(spec, analysis, groups).items():
            found.setdefault(key, []).append(value)
        if progress:
            progress(r + 1)
    rows = []
    tasks = {b["key"]: b["task"] for b in spec["blocks"] if b["type"] == "task"}
    for (block, table, estimate, group), runs in found.items():
        widths = [w for _, ws, _ in runs for w in ws]
        reasons = Counter(note for ok, _, note in runs if not ok and note)
        rows.append(
            EstimateCheck(
                block=block,
                task=tasks[block],
                table=table,
                estimate=estimate,
                rater_group=group,
                identified=sum(ok for ok, _, _ in runs) / replications,
                ci_width=float(np.median(widths)) if widths else math.nan,
                reason=reasons.most_common(1)[0][0] if reasons else "",
            )
        )
    return rows, _block_designs(spec)


def _block_designs(spec: dict) -> tuple[dict, ...]:
    content = study_content(spec, spec_digest(spec))
    out = []
    for block in spec["blocks"]:
        if block["type"] != "task":
            continue
        items = len(content.items(block["key"]))
        assignment = block.get("assignment", {})
        per = assignment.get("per_participant", items)
        how = (
            "adaptive (simulated as random)"
            if "adaptive" in assignment
            else "balanced"
            if "per_participant" in assignment
            else "all items"
        )
        out.append(
            {"block": block["key"], "task": block["task"], "assignment": how, "items": items, "per_participant": per}
        )
    return tuple(out)


def planned_participants(spec: dict, default: int) -> int:
    """The participants a study plans: its ``recruitment.target``, else ``default``."""
    return int(spec.get("recruitment", {}).get("target", default))


def _failing(rows: Sequence[EstimateCheck]) -> list[EstimateCheck]:
    return [row for row in rows if row.table and row.identified < IDENTIFIED_SHARE]


def _pool_size(spec: dict, block_key: str) -> int:
    block = next(b for b in spec["blocks"] if b["key"] == block_key)
    pool = next(p for p in spec["pools"] if p["key"] == block.get("pool"))
    return len(pool.get("subjects", []))


def check_design(
    spec: dict,
    *,
    participants: int,
    by: Sequence[str] = (),
    replications: int = DEFAULT_REPLICATIONS,
    seed: int = 0,
    advise: bool = True,
    progress: Callable[[int], None] | None = None,
) -> DesignCheck:
    """The design check of the stored study file ``spec`` with its warnings in plain words and, with
    ``advise``, the participants (or subjects) that would make every estimate estimable (module doc)."""
    started = time.perf_counter()
    by = check_by(spec, by)
    rows, blocks = run_check(
        spec, participants=participants, by=by, replications=replications, seed=seed, progress=progress
    )
    n_groups = max(len(_group_labels(spec, by)), 1)
    failing = _failing(rows)
    advice: dict[str, Any] = {}
    if failing and advise:
        advice = _advice(spec, failing, participants=participants, by=by, replications=replications, seed=seed)
    warnings = tuple(_warnings(failing, participants, n_groups, by, advice, replications))
    return DesignCheck(
        slug=spec["slug"],
        participants=participants,
        by=by,
        replications=replications,
        seed=seed,
        seconds=time.perf_counter() - started,
        blocks=blocks,
        rows=tuple(rows),
        warnings=warnings,
        n_groups=n_groups,
        advice=advice,
    )


def _advice(
    spec: dict, failing: list[EstimateCheck], *, participants: int, by: tuple[str, ...], replications: int, seed: int
) -> dict[str, int | None]:
    """The first of ``SEARCH_FACTORS`` x ``participants`` at which every ``failing`` estimate is identified
    (one run first: a size whose first run fails one is passed over, so most sizes cost one run), and the
    subjects at most that give the planned participants as many judgements per item and group (module doc)."""
    wanted = {(r.block, r.table, r.rater_group) for r in failing}

    def suffices(n: int, runs: int) -> bool:
        rows, _ = run_check(spec, participants=n, by=by, replications=runs, seed=seed + 1)
        return not any((r.block, r.table, r.rater_group) in wanted for r in _failing(rows))

    for factor in SEARCH_FACTORS:
        bigger = math.ceil(participants * factor)
        if suffices(bigger, 1) and suffices(bigger, replications):
            subjects = _pool_size(spec, failing[0].block)
            return {"participants_needed": bigger, "subjects_at_most": math.floor(subjects * participants / bigger)}
    return {"participants_needed": None, "subjects_at_most": None}


def _warnings(failing, participants: int, n_groups: int, by, advice: dict, replications: int) -> list[str]:
    """One plain sentence per block and estimate that is not estimable overall or for some rater groups."""
    out = []
    fix = ""
    if advice.get("participants_needed"):
        subjects = advice.get("subjects_at_most")
        fewer = f"use at most {subjects} subjects or " if subjects else "use "
        fix = f": {fewer}{advice['participants_needed']} participants"
    elif advice:
        fix = f": not even {math.ceil(participants * SEARCH_FACTORS[-1])} participants suffice; ask fewer items"
    seen = set()
    for row in failing:
        key = (row.block, row.table, row.rater_group == ALL)
        if key in seen:
            continue
        seen.add(key)
        name = row.table.replace("_", " ")
        if row.rater_group == ALL:
            out.append(
                f"with {participants} participants, the {name} of block {row.block!r} will not be estimable "
                f"(estimated in {row.identified * replications:.0f} of {replications} simulations; {row.reason}){fix}"
            )
            continue
        groups = [r for r in failing if (r.block, r.table) == (row.block, row.table) and r.rater_group != ALL]
        out.append(
            f"with {participants} participants in {n_groups} groups ({' / '.join(by)}), per-group {name} of block "
            f"{row.block!r} will not be estimable for {len(groups)} of the {n_groups} groups "
            f"({groups[0].rater_group}: estimated in {groups[0].identified * replications:.0f} of {replications} "
            f"simulations; {groups[0].reason}){fix}"
        )
    return out
