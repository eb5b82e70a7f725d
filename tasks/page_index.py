"""What a task type may ask of the study while it serves a page: the page index (:class:`PageIndex`).

A task method (``form``, ``context``, ``answers``, ``answer_bounds``, ``simulate``, ...) gets the page it
serves (:class:`Page`) and the index of the participant's condition, typed as the :class:`PageIndex`
``Protocol``: the block of a page (:class:`Block`), its pool (:class:`Pool`), the item of a page in the
shape of the block's items (``pair``, ``triplet``, ``stimulus_set``: the item types of
``tasks.item_shapes``), a subject, a model's output, a subject's profile card and charts. The runtime's
index (``participation.pages.ContentIndex``) satisfies it structurally, and mypy checks every task against
it, so a misspelt lookup (``index.pairr(page)``) or a key no block has fails ``make lint``, not a page.

The typed dictionaries name the keys of the validated study file (``studies.format2``) that tasks read;
a new task type adds the block options it reads to :class:`Block`.
"""

from typing import Any, NotRequired, Protocol, Required, TypedDict

from tasks.item_shapes import FeatureItem, ModelComparisonItem, PairItem, RankingItem, StimulusSet, TripletItem

Chart = dict[str, Any]  # a line chart's data (``studies.content.line_chart``): x, traces, ytitle, description


class Page(TypedDict, total=False):
    """A page of a participant's plan: its ``key`` and ``kind`` (the task type's page kind), the ``block``
    it belongs to, the ``item`` it shows (or the ``items`` of a one-page block), its ``position`` in the
    block, an adaptive block's ``slot``, a pair-distance page's ``measure`` and a converted fair-score
    page's comparison ``subjects`` in the order shown."""

    key: Required[str]
    kind: Required[str]
    block: str
    item: str
    items: list[str]
    position: int
    slot: int
    measure: str
    subjects: list[str]


class Block(TypedDict, total=False):
    """A validated block of a format 2 study file, with its defaults filled in (``studies.format2``): the
    keys every block has, then a task block's common options, then the options the task types read."""

    # every block
    key: Required[str]
    type: str  # "task", "questionnaire", "instructions", "attention", "detection"
    title: str
    intro: str
    conditions: list[str]
    page_key: dict[str, str]  # a converted format 1 block: the question keys its answers keep
    # task blocks
    task: str
    pool: str
    assignment: dict[str, Any]
    order: dict[str, Any]
    model: str
    bts: dict[str, Any]
    pairs: list[PairItem]
    triplets: list[TripletItem]
    sets: list[StimulusSet]
    features: list[FeatureItem]
    rankings: list[RankingItem]
    comparisons: list[ModelComparisonItem]
    # options of one or more task types
    question: str
    decision: str
    scale: dict[str, Any]
    likert: dict[str, Any]
    measures: list[str]
    rationale_factors: bool
    label_names: dict[str, str]
    item_keys: dict[str, str]
    one_page: bool
    confidence: bool
    strength: bool
    allow_equal: bool
    favourable: str
    show_model: bool
    risk_label: str
    properties: bool
    group: str  # tradeoff: the pool's column that splits the subjects into groups
    # instructions, questionnaire, attention and detection blocks
    text: str
    questions: list[dict[str, Any]]
    check: str
    options: list[str]
    flag_if: str
    sentence: str
    max_error_share: float


class ModelOutput(TypedDict, total=False):
    """A model's output for a subject: its ``score`` in [0, 1] and its ``label`` (0 or 1), either may be absent."""

    score: float
    label: int


class Subject(TypedDict):
    """A decision subject of a pool: its id, feature and group columns, yearly series, true outcome and the
    models' outputs (by model name)."""

    id: str
    features: dict[str, Any]
    groups: dict[str, Any]
    series: NotRequired[list[float]]
    outcome: NotRequired[int]
    models: dict[str, ModelOutput]


class Pool(TypedDict, total=False):
    """An item pool: its key, what a subject is called, its subjects and how a subject is shown."""

    key: Required[str]
    subject_noun: str
    subject_noun_plural: str
    outcome_column: str
    subjects: list[Subject]
    display: dict[str, Any]
    csv: dict[str, Any]


class Card(TypedDict):
    """A subject's profile card as a page shows it: title, profile text, table rows, chart (its line
    named ``title``) and the chart's element id (unique on the page)."""

    title: str
    text: str
    table: list[tuple[str, str]]
    chart: Chart | None
    chart_id: str


class PageIndex(Protocol):
    """The lookups a task type may make into the study of a participant's condition."""

    @property
    def spec(self) -> dict[str, Any]:
        """The whole validated study file (format 2)."""
        ...

    def block(self, page: Page) -> Block:
        """The block the page belongs to."""
        ...

    def pool_of(self, page: Page) -> Pool:
        """The pool of the page's block."""
        ...

    def noun(self, pool: Pool) -> str:
        """What the pool calls a subject ("person", "applicant")."""
        ...

    def subject(self, pool: str, subject_id: str) -> Subject:
        """A subject of the pool called ``pool``."""
        ...

    def pair(self, page: Page) -> PairItem:
        """The page's item of a block over pairs (``tasks.item_shapes.PAIRS``)."""
        ...

    def triplet(self, page: Page) -> TripletItem:
        """The page's item of a block over triplets (``tasks.item_shapes.TRIPLETS``)."""
        ...

    def stimulus_set(self, page: Page) -> StimulusSet:
        """The page's item of a block over stimulus sets (``tasks.item_shapes.SETS``)."""
        ...

    def ranking(self, page: Page) -> RankingItem:
        """The page's item of a block over rankings (``tasks.item_shapes.RANKINGS``)."""
        ...

    def comparison(self, page: Page) -> ModelComparisonItem:
        """The page's item of a block over model comparisons (``tasks.item_shapes.MODEL_COMPARISONS``)."""
        ...

    def model_output(self, pool: str, subject_id: str, model: str) -> ModelOutput:
        """The model's output for a subject (empty when the pool has none)."""
        ...

    def card(self, pool: str, subject_id: str, title: str) -> Card:
        """The subject's profile card, titled ``title`` (never its id)."""
        ...

    def subjects_chart(self, pool: str, subject_ids: list[str], names: list[str]) -> Chart | None:
        """The subjects' series in one chart, traces named ``names`` (None when the pool has no chart)."""
        ...

    def pair_chart(self, pool: str, a: str, b: str, names: tuple[str, str]) -> Chart | None:
        """Both subjects' series in one chart (:meth:`subjects_chart` of two)."""
        ...
