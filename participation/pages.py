"""What a page shows and which form it uses, read from the study file (no queries).

The runtime is generic over task types: ``page_form``, ``page_context`` and ``form_answers`` hand the
page to its task type (``tasks.task_for``). A task type reads the study through the
page index of the participant's condition, :class:`ContentIndex` (over ``studies.content.StudyContent``):
every stored study file is format 2 (a format 1 file is converted at load, ``studies.services.stored_file``).
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from core.caching import BoundedCache
from participation.services import AnswerInput
from participation.signals import records_signals
from studies.content import StudyContent, study_content
from tasks import block_task, task_for
from tasks.item_shapes import (
    MODEL_COMPARISONS,
    PAIRS,
    RANKINGS,
    SETS,
    SUBJECTS,
    TRIPLETS,
    ItemShape,
    ModelComparisonItem,
    PairItem,
    RankingItem,
    StimulusSet,
    TripletItem,
)
from tasks.page_index import Block, Card, Chart, ModelOutput, Page, PageIndex, Pool, Subject


@dataclass(frozen=True)
class ContentIndex:
    """Lookups into a validated format 2 study file for the pages of one condition: the task types'
    :class:`tasks.page_index.PageIndex`."""

    spec: dict
    condition: dict
    content: StudyContent

    def block(self, page: Page) -> Block:
        return self.content.blocks[page["block"]]

    def pool_of(self, page: Page) -> Pool:
        return self.content.pools[self.block(page)["pool"]]

    def noun(self, pool: Pool) -> str:
        return pool["subject_noun"]

    def subject(self, pool: str, subject_id: str) -> Subject:
        return self.content.subject(pool, subject_id)

    def pair(self, page: Page) -> PairItem:
        return cast(PairItem, self._item(page, PAIRS))

    def triplet(self, page: Page) -> TripletItem:
        return cast(TripletItem, self._item(page, TRIPLETS))

    def stimulus_set(self, page: Page) -> StimulusSet:
        return cast(StimulusSet, self._item(page, SETS))

    def ranking(self, page: Page) -> RankingItem:
        return cast(RankingItem, self._item(page, RANKINGS))

    def comparison(self, page: Page) -> ModelComparisonItem:
        return cast(ModelComparisonItem, self._item(page, MODEL_COMPARISONS))

    def _item(self, page: Page, shape: ItemShape) -> dict:
        """The page's item as the file gives it, when the page's block lists items of ``shape``."""
        block = self.block(page)
        found = block_task(block).item_shape
        if found is not shape:
            raise TypeError(f"block {block['key']!r} lists {found.plural}, not {shape.plural}")
        return self.content.item(page["block"], page["item"])

    def model_output(self, pool: str, subject_id: str, model: str) -> ModelOutput:
        return self.content.model_output(pool, subject_id, model)

    def card(self, pool: str, subject_id: str, title: str) -> Card:
        """A profile card: ``title``, the pool's profile ``text``, ``table`` rows and ``chart`` (its line
        named ``title``, never the subject's id; ``chart_id`` unique on the page)."""
        profile = self.content.profile(pool, subject_id)
        chart_id = "subject-" + "".join(ch if ch.isalnum() else "-" for ch in title.lower())
        return {
            "title": title,
            "text": profile.text,
            "table": profile.table,
            "chart": None if profile.chart is None else _named(profile.chart, (title,)),
            "chart_id": chart_id,
        }

    def subjects_chart(self, pool: str, subject_ids: list[str], names: list[str]) -> Chart | None:
        """The subjects' series in one chart, traces named ``names`` (None when the pool has no chart)."""
        if "chart" not in self.content.pools[pool]["display"]:
            return None
        return _named(self.content.chart(pool, *subject_ids), tuple(names))

    def pair_chart(self, pool: str, a: str, b: str, names: tuple[str, str]) -> Chart | None:
        """Both subjects' series in one chart, traces named ``names`` (None when the pool has no chart)."""
        return self.subjects_chart(pool, [a, b], list(names))


if TYPE_CHECKING:

    def _is_a_page_index(index: ContentIndex) -> PageIndex:
        """mypy checks here that the runtime's index offers every lookup a task may make."""
        return index


def _named(chart: dict, names: tuple[str, ...]) -> dict:
    """A copy of a line chart (``studies.content.line_chart``) whose traces, in order, are called ``names``."""
    traces = [{**trace, "name": name} for trace, name in zip(chart["traces"], names, strict=True)]
    description = "; ".join(
        f"{t['name']}: " + ", ".join(f"{x} {y:g}" for x, y in zip(chart["x"], t["y"], strict=True)) for t in traces
    )
    return {**chart, "traces": traces, "description": description}


_INDEX_CACHE: BoundedCache = BoundedCache(size=4096)  # small objects; one per study version and condition


def condition_index(spec: dict, spec_hash: str, condition_key: str) -> ContentIndex:
    """Lookups for one condition of a stored (format 2) study file, cached by the file's digest (a stored
    spec never changes)."""
    cache_key = (spec_hash, condition_key)
    index = _INDEX_CACHE.get(cache_key)
    if index is not None:
        return index
    condition = next(c for c in spec["conditions"] if c["key"] == condition_key)
    return _INDEX_CACHE.put(cache_key, ContentIndex(spec, condition, study_content(spec, spec_hash)))


def page_form(page: Page, index: ContentIndex, data=None):
    return task_for(page).form(page, index, data)


def form_answers(page: Page, index: ContentIndex, form) -> list[AnswerInput]:
    return task_for(page).answers(page, index, form)


def page_context(page: Page, index: ContentIndex) -> dict:
    """Template name and the data it needs, beyond the form."""
    task = task_for(page)
    ctx: dict = {
        "condition": index.condition,
        "unit": index.condition.get("unit", ""),
        "records_signals": records_signals(index.spec),
    }
    if isinstance(index, ContentIndex) and "block" in page:  # a block's intro, shown on each of its pages
        ctx["intro"] = index.block(page).get("intro", "")
        # Only pages showing subjects of a pool with a chart load Plotly (4.8 MB; 1.4 MB compressed).
        block = index.block(page)
        shows_subjects = "pool" in block and getattr(task, "item_shape", SUBJECTS).shows_subjects
        ctx["uses_charts"] = shows_subjects and "chart" in index.pool_of(page)["display"]
    ctx.update(task.context(page, index))
    return {"template": task.template(page), **ctx}
