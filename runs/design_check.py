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

Per block, per estimate of its task type's report tables (``ReportTable.estimate``, else its ``headline``) and
per rater group (and all participants): ``identified`` = share of the replications whose table holds a finite
estimate for the group (an estimator that refuses, e.g. Bradley-Terry's "the maximum likelihood strengths are
infinite", or a group too small to compare, counts as not identified), ``ci_width`` = the median width of its
95% intervals over rows and replications. A block whose task type has no analysis gets its reason; a table no
run produced (error rates without an outcome column) is "not produced", never warned about.

Advice (:func:`check_design`): where an estimate is identified in fewer than ``IDENTIFIED_SHARE`` of the
replications, the first run is grown by more participants (the next tickets: the first n' participants of a
run are a run of n') to ``participants`` x 1.5, 2, 3, 4, 6, 8 until the estimate is identified in it: n*, the
participants needed (one run: a guide, to confirm with ``plan_study`` at that size). Identification depends on
the judgements each item gets per group, n M / (G K) (M items per participant, G groups, K items), so with
the planned n the same rate needs K n / n* items: for a builder's design, whose items grow with its subjects,
at most S n / n* subjects.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from fairness.rater_groups import ALL
from participation.assignment import capacity, condition_for, item_choice
from participation.models import Participant
from participation.pages import condition_index, form_answers, page_form
from participation.plan import plan_for
from participation.simulate import as_post
from research.answer_rows import participant_answer_rows, references_of
from research.export_stream import StoredAnswer
from runs.design_analysis import analyze_design
from runs.plan_parameters import DESIGN_CHECK_REPLICATIONS as DEFAULT_REPLICATIONS
from simulation.raters import default_group_effects, draw_rater
from studies.content import study_content
from studies.format2 import check_by
from studies.services import spec_digest
from tasks import block_task, task_for
from tasks.page_index import Page

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
    applies: bool = True  # False: no run produced the table (e.g. error rates without an outcome column)


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
            if not row.applies:
                lines.append(f"  {row.block:<14} {name:<28} not produced for this design{why}")
                continue
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
                    "applies": row.applies,
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

    plan: list[Page]


def _slot_item(page: Page, content, seen: set[str], rng: np.random.Generator) -> Page:
    """An adaptive slot page with an item drawn at random among those the participant has not seen."""
    left = [item for item in content.items(page["block"]) if item not in seen]
    item = left[int(rng.integers(len(left)))]
    seen.add(item)
    return {**page, "item": item}


class StudySimulation:
    """One simulated run of the stored (format 2) study ``spec`` (module doc), grown participant by participant
    in ticket order (:meth:`grow`), so that its first n participants are a run of n: its answers table (the
    export's columns) and questionnaire table (participant_id and the rater's single-choice answers)."""

    def __init__(self, spec: dict, rng: np.random.Generator) -> None:
        self.spec, self.rng = spec, rng
        self.digest = spec_digest(spec)
        self.content = study_content(spec, self.digest)
        self.effects = default_group_effects(spec)
        self.references = references_of(spec)
        self.rows: list[dict] = []
        self.people: list[dict] = []

    def grow(self, participants: int) -> None:
        """Simulate the participants of tickets ``len(people)`` .. ``participants - 1``."""
        spec, content, rng = self.spec, self.content, self.rng
        for ticket in range(len(self.people), participants):
            condition = condition_for(spec, ticket)
            plan = plan_for(spec, condition, int(rng.integers(2**62)), item_choice(spec, content, ticket), content)
            index = condition_index(spec, self.digest, condition)
            rater = draw_rater(spec, self.effects, rng)
            answers, seen, pages = [], set[str](), []
            for planned in plan:
                page = _slot_item(planned, content, seen, rng) if "slot" in planned else planned
                pages.append(page)
                form = page_form(page, index, data=as_post(task_for(page).simulate(page, index, rater, rng)))
                if not form.is_valid():
                    raise RuntimeError(f"simulated answer refused on {page['key']}: {form.errors.as_text()}")
                answers += [
                    StoredAnswer(page["key"], a.question, a.measure, a.subject_key, a.number, a.text)
                    for a in form_answers(page, index, form)
                ]
                if task_for(page).screens_out(form):
                    break
            pid = f"sim-{ticket}"
            base = {"participant_id": pid, "study": spec["slug"], "study_version": 1, "condition": condition}
            person = cast(Participant, _Participant(pages))  # participant_answer_rows reads only its plan
            self.rows += participant_answer_rows(base, spec, self.references, person, answers, 0)
            self.people.append({"participant_id": pid, **rater.group})

    def analysis(self, by: tuple[str, ...], seed: int):
        """The analysis the report runs (``runs.design_analysis.analyze_design``) of the participants so far."""
        return analyze_design(
            self.spec,
            pd.DataFrame(self.rows),
            pd.DataFrame(self.people),
            by=by,
            seed=seed,
            n_resamples=N_RESAMPLES,
            n_permutations=N_RESAMPLES,
        )


NOT_PRODUCED = ""  # the rater group of an estimate whose table no run produced (not applicable to this design)


def _estimates(spec: dict, analysis, groups: Sequence[str]) -> dict[tuple, tuple[bool, list[float], str]]:
    """(block, table, estimate, rater group) -> (estimated, its CI widths, why not) in one analysed run. A table
    with a row for all participants (``ALL``) is per rater group: a group without rows was not estimated; any
    other table is one overall estimate. A table the run did not produce (e.g. error rates without an outcome
    column) gets the key :data:`NOT_PRODUCED` with the block's notes."""
    out: dict[tuple, tuple[bool, list[float], str]] = {}
    blocks = {b["key"]: b for b in spec["blocks"]}
    for result in analysis.blocks:
        task = block_task(blocks[result.block])
        why = " ".join(result.notes)
        if not task.analysis:
            out[(result.block, "", "", ALL)] = (False, [], task.no_analysis)
            continue
        for name, table in task.report_tables.items():
            column = table.estimate or table.headline
            if not column:
                continue
            frame = result.tables.get(name)
            if frame is None or not len(frame):
                out[(result.block, name, column, NOT_PRODUCED)] = (False, [], why)
                continue
            view = task.present(name, frame).frame
            per_group = "rater_group" in view.columns and bool((view["rater_group"] == ALL).any())
            for group in (ALL, *groups) if per_group else (ALL,):
                rows = view[view["rater_group"] == group] if per_group else view
                out[(result.block, name, column, group)] = _estimated(rows, column, analysis, group, why)
    return out


def _estimated(rows: pd.DataFrame, column: str, analysis, group: str, why: str) -> tuple[bool, list[float], str]:
    """Whether ``rows`` hold a finite ``column``, the widths of their finite intervals, and why not."""
    values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce")
    estimated = bool(np.isfinite(values.to_numpy(float)).any())
    widths: list[float] = []
    if estimated and {"ci_low", "ci_high"} <= set(rows.columns):
        width = pd.to_numeric(rows["ci_high"], errors="coerce") - pd.to_numeric(rows["ci_low"], errors="coerce")
        widths = [float(w) for w in width.to_numpy(float) if np.isfinite(w) and w > 0]
    if estimated:
        return True, widths, ""
    note = next((str(n) for n in rows.get("note", []) if isinstance(n, str) and n), "")
    return False, widths, note or _group_reason(analysis, group) or why


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


def _verdicts(found: dict[tuple, list[tuple[bool, list[float], str]]], spec: dict, runs: int) -> list[EstimateCheck]:
    """Each estimate's runs summarised: the share identified (a run that did not produce its table counts as
    not identified), the median CI width, the commonest reason. A table no run produced is one row, rater group
    :data:`NOT_PRODUCED`, not applicable (never warned about)."""
    rows = []
    tasks = {b["key"]: b["task"] for b in spec["blocks"] if b["type"] == "task"}
    produced = {key[:3] for key in found if key[3] != NOT_PRODUCED}
    for (block, table, estimate, group), results in found.items():
        if group == NOT_PRODUCED and (block, table, estimate) in produced:
            continue  # counted as a failed run of each of its groups below
        missing: list[tuple[bool, list[float], str]] = [(False, [], "the table was not produced in this run")]
        missing *= runs - len(results)
        if group != NOT_PRODUCED and len(results) < runs:
            results = results + missing
        widths = [w for _, ws, _ in results for w in ws]
        reasons = Counter(note for ok, _, note in results if not ok and note)
        rows.append(
            EstimateCheck(
                block=block,
                task=tasks[block],
                table=table,
                estimate=estimate,
                rater_group=group,
                identified=sum(ok for ok, _, _ in results) / runs,
                ci_width=float(np.median(widths)) if widths else math.nan,
                reason=reasons.most_common(1)[0][0] if reasons else "",
                applies=group != NOT_PRODUCED,
            )
        )
    return rows


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
    return [row for row in rows if row.table and row.applies and row.identified < IDENTIFIED_SHARE]


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
    """The design check of the stored study file ``spec`` at ``participants`` with its warnings in plain words
    and, with ``advise``, the participants (or subjects) that make every estimate estimable (module doc)."""
    if replications < 1:
        raise ValueError(f"the design check needs at least one simulated run, got {replications}")
    most = capacity(spec)
    if most is not None and participants > most:
        raise ValueError(f"{participants} participants is more than the conditions' caps allow ({most})")
    started = time.perf_counter()
    by = check_by(spec, by)
    groups = _group_labels(spec, by)
    found: dict[tuple, list[tuple[bool, list[float], str]]] = {}
    first: StudySimulation | None = None
    for r in range(replications):
        run = StudySimulation(spec, np.random.default_rng([seed, r]))
        run.grow(participants)
        for key, value in _estimates(spec, run.analysis(by, seed + r), groups).items():
            found.setdefault(key, []).append(value)
        first = first or run
        if progress:
            progress(r + 1)
    rows = _verdicts(found, spec, replications)
    failing = _failing(rows)
    assert first is not None  # replications >= 1
    advice = _advice(spec, first, failing, participants=participants, by=by, seed=seed) if failing and advise else {}
    return DesignCheck(
        slug=spec["slug"],
        participants=participants,
        by=by,
        replications=replications,
        seed=seed,
        seconds=time.perf_counter() - started,
        blocks=_block_designs(spec),
        rows=tuple(rows),
        warnings=tuple(_warnings(failing, participants, max(len(groups), 1), by, advice, replications)),
        n_groups=max(len(groups), 1),
        advice=advice,
    )


def _advice(
    spec: dict, run: StudySimulation, failing: list[EstimateCheck], *, participants: int, by, seed: int
) -> dict[str, int | None]:
    """The smallest of ``SEARCH_FACTORS`` x ``participants`` at which every ``failing`` estimate is identified
    in the first run grown by more participants (:meth:`StudySimulation.grow`: one run, so each size costs only
    its new participants and one analysis), and the subjects at most that give the planned participants as many
    judgements per item and group (module doc); None where no size tried suffices."""
    wanted = {(r.block, r.table, r.estimate, r.rater_group) for r in failing}
    groups = _group_labels(spec, by)
    for factor in SEARCH_FACTORS:
        size = math.ceil(participants * factor)
        if (most := capacity(spec)) is not None and size > most:
            break  # the conditions' caps end the study before this size
        run.grow(size)
        estimates = _estimates(spec, run.analysis(by, seed), groups)
        if all(estimates.get(key, (False,))[0] for key in wanted):
            subjects = _pool_size(spec, failing[0].block)
            return {"participants_needed": size, "subjects_at_most": math.floor(subjects * participants / size)}
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
        fix = (
            f": not even {math.ceil(participants * SEARCH_FACTORS[-1])} participants made it estimable in a simulated "
            "run; use fewer subjects (each item judged more often) or fewer rater groups"
        )
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


def write_check_report(check: DesignCheck, out_dir: Path, *, title: str) -> Path:
    """report.html (the warnings first, then one row per estimate and rater group), design_check.csv and
    results.json in ``out_dir``."""
    from runs.provenance import Provenance
    from runs.reports.base import Section, render_report, table_context, write_csv, write_json

    out_dir.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame([vars(row) for row in check.rows])
    write_csv(table, out_dir / "design_check.csv")
    write_json(check.as_dict(), out_dir / "results.json")
    designs = pd.DataFrame(list(check.blocks))
    intro = [
        check.summary().splitlines()[0],
        *(check.warnings or ["No warning: every estimate is identified at this size."]),
    ]
    sections = [
        Section(title="The simulated design", tables=[table_context(designs)]),
        Section(
            title="Identified estimates and interval widths",
            paragraphs=[
                "identified: the share of simulated runs in which the block's analysis computed the estimate for "
                "the rater group (an estimator that refuses, or a group too small to compare, counts as not "
                "identified); ci_width: the median width of its 95% intervals over the rows and runs; reason: why "
                "it was not computed, in the estimator's words."
            ],
            tables=[table_context(table.drop(columns=["task"]), columns=None)],
        ),
    ]
    provenance = Provenance(
        study=f"{check.slug} (the study file checked, not yet a study)",
        participants={"simulated per run": check.participants},
        seeds={"simulation": check.seed},
        settings={"runs": str(check.replications), "rater groups": " / ".join(check.by) or "one group"},
    )
    return render_report(out_dir, title, sections, intro=intro, provenance=provenance)
