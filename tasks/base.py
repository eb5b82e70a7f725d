"""The interface every task type implements, and what the task types share.

A task type serves one or more page kinds (a format 1 kind and its format 2 successor render
through the same class) and owns its whole chain: the options its study-file blocks take (JSON
schema, semantic checks, defaults), its items, form, template and page context, the measures its
answers are stored under (the codebook's entries; the database refuses any other), its BTS positive
answer, its integrity bounds, its builder template, the estimators and report section that turn its
answers into results, and its simulation (in the pure ``simulation`` package). The runtime, the
export, the analysis and the builder ask the registry (``tasks.REGISTRY``), never a task by name,
so adding a task type is its module, its template, its tests and one line in ``tasks/__init__.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.utils.translation import gettext

from core.columns import Column
from core.report_texts import ReportTable, TableView
from tasks.item_shapes import ITEM_SHAPES, SUBJECTS, ItemShape, UnknownItemShape
from tasks.page_index import Page, PageIndex
from tasks.questions import page_key
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np
    import pandas as pd

    from simulation.raters import SimulatedRater


@dataclass(frozen=True)
class AnswerInput:
    """One answer a page stores (``participation.models.Answer``): its question key (``tasks.questions``),
    measure (one of its task type's ``measures``), the set and subject it is about, and its value."""

    question: str
    measure: str
    set_key: str = ""
    subject_key: str = ""
    number: float | None = None
    text: str = ""


def answer_number(value) -> float | None:
    """A stored answer's number as a float; None when it has none (None or NaN)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


class FoundAnswers:
    """One participant's stored answers (rows with ``page``, ``measure``, ``subject``, ``number``,
    ``text``) by (page, measure) and by (page, measure, subject): the first stored for a page and measure."""

    def __init__(self, answers: list) -> None:
        self.answers: dict[tuple[str, str, str], object] = {}
        for answer in answers:
            self.answers.setdefault((answer.page, answer.measure, ""), answer)
            self.answers[(answer.page, answer.measure, answer.subject)] = answer

    def number(self, page_key: str, measure: str, subject: str = "") -> float:
        answer = self.answers.get((page_key, measure, subject))
        value = None if answer is None else answer_number(answer.number)  # type: ignore[attr-defined]
        return math.nan if value is None else value

    def text(self, page_key: str, measure: str, subject: str = "") -> str:
        answer = self.answers.get((page_key, measure, subject))
        return "" if answer is None else answer.text  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BuilderInput:
    """What ``build_study`` gives a task type's builder template: the pool's subjects (CSV order; their
    ``models`` hold ``model``'s output when the CSV has one), their feature columns (a DataFrame, one row
    per subject), the pool's and the model's names, and the most items a block may list."""

    subjects: list[dict]
    features: Any
    pool: str
    model: str
    max_items: int
    decision: str | None = None  # build_study --decision (None: the template's default)
    mix: tuple[str, ...] = ()  # build_study --mix: the relations drawn per subject (empty: the default)
    allow_tie: bool = False  # build_study --allow-tie: the block's choices get a tie answer (builder_allows_tie)


class BuilderProblem(ValueError):
    """A CSV a task type's builder template cannot make a block of (the message says why)."""


@dataclass(frozen=True)
class BtsPositive:
    """The answers that count as a question's "positive" option for the Bayesian Truth Serum, whose
    share the prediction follow-up asks for: those of ``measure`` with ``low <= value <= high``; and where
    the block's answers are in the answers table (set by ``tasks.bts_positives``,
    ``tasks.questions.answers_rows``): the rows of ``block`` (the block key when empty), only those of
    ``conditions`` and about ``subjects`` when given (a converted block shares its ``block`` with others)."""

    measure: str
    low: float = -math.inf
    high: float = math.inf
    block: str = ""
    conditions: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Adaptive:
    """What an adaptive block of a task type uses (``participation.adaptive``, ``runs.adaptive``): ``design``
    the candidate score (a name in ``analysis.adaptive_design.DESIGNS``), ``fit`` the dotted path of the
    refit function (job workers only: it may import the scientific stack), called with the block's answers
    ((participant id, item id, number) of ``measure``) and its pool, returning what ``AdaptiveFit`` stores."""

    design: str
    fit: str
    measure: str


class TaskType:
    """One task type: its form, template, context, answers, measures, integrity bounds and simulation."""

    name: str = ""
    kinds: tuple[str, ...] = ()
    # Answer.measure values this type writes -> the codebook's column (type, meaning, values)
    measures: dict[str, Column] = {}
    # the part of a format 1 study this type's converted blocks were (their ``page_key.block``), if any
    format1_part: str | None = None

    def template(self, page: Mapping[str, Any]) -> str:
        return f"surveys/page_{page['kind']}.html"

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        raise NotImplementedError

    def context(self, page: Page, index: PageIndex) -> dict:
        """What the template needs beyond the form."""
        return {}

    def answers(self, page: Page, index: PageIndex, form: forms.Form) -> list[AnswerInput]:
        """The answers of a valid bound form."""
        return form.answers()  # type: ignore[attr-defined]  # every task form has answers()

    def answer_bounds(self, page: Page, index: PageIndex) -> tuple[int, int]:
        """(fewest, most) answers a saved page stores, for the integrity check: one per required
        field of its form, up to one per field."""
        fields = self.form(page, index).fields.values()
        return sum(field.required for field in fields), len(fields)

    def screens_out(self, form: forms.Form) -> bool:
        """Whether this valid answer ends the study for the participant (screening)."""
        return False

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """The page's POST data as ``rater`` would send it."""
        raise NotImplementedError

    def fill(self, page: Page, index: PageIndex, rng: np.random.Generator) -> Mapping[str, str | list[str]]:
        """The type's bot: a valid answer to ``page``, the POST data its form accepts (field -> value, a list
        for a multi-valued field), which the load client (``participation.loadclient``), ``bench/launch.py``
        and the tests send. By default :meth:`simulate` with a neutral rater, ``SimulatedRater()`` of
        ``simulation.raters``: no leniency or scale shift, noise 0.5, effort weight 0.65, always attentive,
        unbiased predictions, no questionnaire answers. A type whose answer needs no rater (instructions,
        screening, attention, detection, questionnaire) has its own, importing no scientific library."""
        from simulation.raters import SimulatedRater

        return self.simulate(page, index, SimulatedRater(), rng)


class BlockTask(TaskType):
    """A task type of format 2 ``task`` blocks (``"task": name`` in a study file) over items of a pool.

    ``options`` are the JSON schemas of the block fields only this type takes beside the common ones
    (key, conditions, pool, title, intro, assignment, order); ``needs`` those a block must give;
    ``item_shape`` the shape of its items (``tasks.item_shapes``: subjects of the pool, pairs, triplets,
    sets, features), which owns the items' block field, ids, the subjects they show and their summary label;
    ``export_table`` the derived export table its answers also make
    (``research.tables``), if any; ``builder_template`` its ``build_study --template`` name and
    ``builder_description`` how the web builder lists it, or None with ``no_builder_template`` saying why.
    ``estimators`` are the dotted names of the functions in ``analysis/`` or ``fairness/`` its analysis
    uses; ``analysis`` the dotted name of the block analysis the report runs (in
    ``fairness.task_blocks``, called with the spec, the block, the answers, the rater groups and the
    options), or None with ``no_analysis`` saying why (shown in the report and results.json);
    ``report_tables`` the tables that analysis returns (beside the rater-group ``tests`` every block
    may have), each a section of the analysis report: its heading, columns, explanation and estimate.
    ``parity_table`` names the table of the study's differential-parity job its answers make
    (``fairness.study_parity``), if any.
    ``weighs_features``: its estimator weighs the pool's feature columns (a utility model, a learned
    metric), so the study file's validation refuses a feature that no page shows.
    ``yields``: what its estimators produce that audits and calibrations use (``tasks.yields.Yield``), each with
    the measure of its answers it is fitted to; every block type declares it, empty when it yields nothing.
    """

    options: dict[str, dict] = {}
    needs: tuple[str, ...] = ()
    item_shape: ItemShape = SUBJECTS
    export_table: str | None = None
    parity_table: str | None = None
    builder_template: str | None = None
    builder_description: str = ""  # the web builder's label of the template
    no_builder_template: str = ""
    estimators: tuple[str, ...] = ()
    yields: Mapping[Yield, str]
    weighs_features: bool = False
    analysis: str | None = None
    no_analysis: str = ""
    report_tables: dict[str, ReportTable] = {}
    default_bts_prompt: str = ""
    # The builder template (``builder_template``): the block's key, the instructions page, the seconds one
    # item takes (the consent text's estimate) and whether it needs the model's output.
    builder_key: str = ""
    builder_instructions: str = ""
    builder_seconds: int = 0
    builder_needs_model: bool = False
    # ``--mix``: the relations the template may draw items by, and its default mix (empty: no --mix);
    # ``--decision``: the default decision its question names (None: no --decision).
    builder_relations: tuple[str, ...] = ()
    builder_mix: tuple[str, ...] = ()
    builder_decision: str | None = None
    # ``--allow-tie``: its blocks can take a tie answer ("Equally / cannot decide") that its estimator models.
    builder_allows_tie: bool = False
    # ``assignment.adaptive``: what its blocks choose each participant's next item with from the current
    # fit of the block's answers (``participation.adaptive``); None: not adaptive.
    adaptive: Adaptive | None = None

    def export_rows(self, pages: list[dict], found: FoundAnswers, content, seconds) -> list[dict]:
        """One participant's rows of the derived table ``export_table`` (its columns after the participant's
        and before ``excluded``, which the export adds): ``pages`` are the participant's pages of this task
        type in plan order, ``found`` their answers, ``content`` the study's ``studies.content.StudyContent``
        and ``seconds(page_key)`` the time spent on a page (NaN if unknown)."""
        return []

    def builder_block(self, source: BuilderInput) -> dict:
        """The options of the task block ``build_study --template builder_template`` makes (beside key,
        type and pool); :class:`BuilderProblem` when the CSV cannot make one."""
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A block task's ``item_shape`` must be a registered shape (``tasks.item_shapes.ITEM_SHAPES``)."""
        super().__init_subclass__(**kwargs)
        shape = cls.item_shape
        if ITEM_SHAPES.get(getattr(shape, "name", "")) is not shape:
            raise UnknownItemShape(
                f"{cls.__name__}.item_shape {shape!r} is not a registered item shape; known shapes: "
                f"{', '.join(ITEM_SHAPES)} (tasks.item_shapes)"
            )

    def item_map(self, block: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, dict | str]:
        """Item id -> the item as the file gives it (a pair, a set; ``""`` for a subject), in file order."""
        return self.item_shape.item_map(block, pool)

    def item_subjects(self, item_id: str, item: dict | str) -> list[str]:
        """The subject ids an item shows; strata go by the first (a pair's a, a triplet's anchor, a
        set's reference); a feature shows none."""
        return self.item_shape.item_subjects(item_id, item)

    def item_count(self, block: dict, pool: dict) -> int:
        """How many items the block has (:meth:`item_map`, counted without listing them)."""
        return self.item_shape.count(block, pool)

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        """Semantic checks beyond the schema (``add(path, rule)`` per problem); called only when the
        pool has inline subjects and the block gives every field in ``needs``. ``memo`` is shared by the
        blocks of one file (``tasks.schema.once``): what depends only on the pool is computed once."""

    def apply_defaults(self, block: dict, pool: dict) -> None:
        """Fill in the documented defaults of the block's options (when the file is read)."""
        if "bts" in block and self.default_bts_prompt:
            block["bts"].setdefault("prompt", gettext(self.default_bts_prompt))

    def present(self, name: str, frame: pd.DataFrame) -> TableView:
        """What the analysis report shows of the block's table ``name`` (its CSV keeps all of ``frame``):
        by default the whole table with its ``report_tables`` labels."""
        return TableView(frame)

    def item_pages(self, block: dict, page: Page) -> list[Page]:
        """The pages of one item of a participant's plan, from its first (key ``<block>/<item>``)."""
        return [page]

    def pages_per_item(self, block: dict, pool: dict, memo: dict | None = None) -> int:
        """Pages one item of the block takes (as :meth:`item_pages` makes them), before or after the
        block's defaults are filled in."""
        return 1

    def one_page(self, block: dict) -> bool:
        """Whether the block asks all its items on one page (:meth:`block_page`), not one item per page."""
        return False

    def block_page(self, block: dict, items: list[str]) -> Page:
        """The one page of a :meth:`one_page` block: key the block's, ``items`` in the participant's order."""
        return {"key": page_key(block), "kind": block["task"], "block": block["key"], "items": items, "position": 0}

    def pages_shown(self, block: dict, pool: dict, items: int, memo: dict | None = None) -> int:
        """Pages a participant shown ``items`` of the block's items sees: one for a :meth:`one_page`
        block (none without items), else ``items`` x :meth:`pages_per_item`."""
        if self.one_page(block):
            return min(items, 1)
        return items * self.pages_per_item(block, pool, memo)

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """The positive answer of the block's BTS follow-up; None without one."""
        return None
