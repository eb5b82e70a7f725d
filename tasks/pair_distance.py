"""Pair distance: how different are two subjects, on the block's Likert scale (``pair_distance`` blocks:
trajectory, aggregate and overall, as a converted format 1 file's ``likert`` pages asked), with the Bayesian
Truth Serum prediction where the study asks for one and, on the overall question, the optional
rationale factors."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

import numpy as np
from django import forms
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.columns import Column
from core.report_texts import CI_LABEL, EFFORT, Explanation, ReportTable
from tasks import questions
from tasks.base import AnswerInput, BlockTask, BtsPositive, FoundAnswers
from tasks.fields import prediction_field, scale_field
from tasks.item_shapes import PAIRS
from tasks.labels import page_labels
from tasks.page_index import Block, Page, PageIndex
from tasks.schema import BTS, LIKERT_QUESTIONS, PAGE_KEY, SHOWN, check_pairs, once
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    from simulation.raters import SimulatedRater

PAIR_COLUMNS = {"trajectory": "d_traj", "aggregate": "d_aggr", "overall": "d_overall"}  # the pairs table's
SECONDS_COLUMNS = {"trajectory": "seconds_traj", "aggregate": "seconds_aggr", "overall": "seconds_overall"}
EFFORT_MEASURES = ("trajectory", "aggregate", "overall")  # the measures the effort analysis's Eq. 5 needs


def rates_effort(block: Block) -> bool:
    """A ``pair_distance`` task block rating the trajectory, aggregate and overall measures: the effort
    analysis (Eq. 5) and its Likert Calibration of alpha apply to the study."""
    return (
        block["type"] == "task"
        and block["task"] == "pair_distance"
        and set(EFFORT_MEASURES) <= set(block.get("measures", []))
    )


FACTOR_CHOICES = [
    ("trajectory", _("Trajectory / trend over the years")),
    ("aggregate", _("Aggregate / total over the years")),
    ("other", _("Other (please specify below)")),
]


@dataclass(frozen=True)
class PairKeys:
    """Where a pair page's answers are stored: ``question(name)`` builds the key of the measure or of
    ``factors`` / ``factor_text``; ``set_key`` and ``subject_key`` go on every answer; ``block``: the page's
    block (``tasks.questions.answer_question``)."""

    set_key: str
    item: str
    subject: str
    block: Block

    def question(self, name: str) -> str:
        return questions.answer_question(self.block, self.item, name)


def _stored_subject(block: Block, item: str) -> str:
    """The ``subject_key`` of a pair's answers: the pair ``a~b``; a converted block's (``page_key``) is
    format 1's, the comparison ``b``."""
    return item.split("~")[1] if "page_key" in block else item


def _asks_prediction(block: Block, measure: str) -> bool:
    """Whether the page of ``measure`` asks the BTS prediction (one of the block's ``bts.measures``)."""
    return measure in block.get("bts", {}).get("measures", [])


class PairDistanceForm(forms.Form):
    def __init__(
        self,
        *args,
        measure: str,
        question: str,
        labels,
        prediction_prompt: str | None,
        factors: bool,
        keys: PairKeys,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.measure, self.keys = measure, keys
        self.fields["rating"] = scale_field(question, labels)
        if prediction_prompt:
            self.fields["prediction"] = prediction_field(prediction_prompt)
        if factors:
            self.fields["factors"] = forms.MultipleChoiceField(
                label=gettext("Optional: which factor(s) influenced your answer? Select all that apply."),
                choices=FACTOR_CHOICES,
                required=False,
                widget=forms.CheckboxSelectMultiple,
            )
            self.fields["factor_text"] = forms.CharField(
                label=gettext("If other, please specify"),
                required=False,
                max_length=2000,
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    def clean(self):
        data = super().clean()
        if "other" in data.get("factors", []) and not data.get("factor_text", "").strip():
            self.add_error("factor_text", gettext("You chose 'Other': please say which factor."))
        return data

    def answers(self) -> list[AnswerInput]:
        data, keys = self.cleaned_data, self.keys
        common: dict[str, Any] = {"set_key": keys.set_key, "subject_key": keys.subject}
        question = keys.question(self.measure)
        out = [AnswerInput(question=question, measure=self.measure, number=data["rating"], **common)]
        if "prediction" in self.fields:
            out.append(
                AnswerInput(
                    question=questions.prediction_question(question),
                    measure="prediction",
                    number=data["prediction"],
                    **common,
                )
            )
        if data.get("factors"):
            out.append(
                AnswerInput(
                    question=keys.question("factors"), measure="factors", text=",".join(data["factors"]), **common
                )
            )
        if data.get("factor_text", "").strip():
            out.append(
                AnswerInput(
                    question=keys.question("factor_text"),
                    measure="factor_text",
                    text=data["factor_text"].strip(),
                    **common,
                )
            )
        return out


def _names(index: PageIndex, page: Page) -> tuple[str, str]:
    a, b = page_labels(index, page, 2)
    return a, b


def pair_question_text(page: Page, index: PageIndex) -> str:
    """The question of a pair page's measure, over the pool's charted feature if any."""
    a, b = _names(index, page)
    chart = index.pool_of(page)["display"].get("chart")
    if page["measure"] == "overall" and chart:
        return gettext("Overall, how different are %(a)s and %(b)s in terms of their %(feature)s?") % {
            "a": a,
            "b": b,
            "feature": chart["feature"],
        }
    if page["measure"] == "overall":
        return gettext("Overall, how different are %(a)s and %(b)s?") % {"a": a, "b": b}
    feature_name = chart["feature"] if chart else gettext("the values")
    if page["measure"] == "trajectory":
        text = gettext("How different are the trajectories (the trends over time) of %(feature)s of %(a)s and %(b)s?")
    else:
        text = gettext("How different are the totals of %(feature)s of %(a)s and %(b)s?")
    return text % {"feature": feature_name, "a": a, "b": b}


def _distance(index: PageIndex, page: Page) -> tuple[float, float]:
    """True (trajectory, aggregate) differences in [0, 1] of the page's pair: from the series when the
    subjects have them (``simulation.raters.pair_truth``), else the share of differing
    feature and group values, for both."""
    from simulation.raters import pair_truth

    pair = index.pair(page)
    pool = index.pool_of(page)["key"]
    a, b = index.subject(pool, pair["a"]), index.subject(pool, pair["b"])
    if a.get("series") and b.get("series"):
        truth = pair_truth(a["series"], b["series"], 1.5)
        return truth.trajectory, truth.aggregate
    values_a = {**a.get("features", {}), **a.get("groups", {})}
    values_b = {**b.get("features", {}), **b.get("groups", {})}
    share = float(np.mean([values_a[c] != values_b.get(c) for c in values_a])) if values_a else 0.5
    return share, share


def _series_facts(subject: dict) -> tuple[float, float]:
    """A subject's total and trend (A_avg, ``fairness.effort.average_acceleration``) of its series; NaN
    without a series."""
    if not subject.get("series"):
        return np.nan, np.nan
    return _facts_of_series(tuple(subject["series"]))


@lru_cache(maxsize=4096)  # a pool's few subjects, met once per pair row of every participant in an export
def _facts_of_series(values: tuple[float, ...]) -> tuple[float, float]:
    from fairness.effort import average_acceleration  # pandas: job workers only

    series = np.asarray(values, dtype=float)
    return float(series.sum()), float(average_acceleration(series[None, :])[0])


@dataclass(frozen=True)
class _PairFacts:
    """What a pairs-table row takes from the file, the same for every participant (computed once per version
    and process, ``StudyContent.derived``): the pair's page keys per measure, its fair-score page and the
    reference's AI score there (blank without one), and both subjects' series totals and trends."""

    set: str
    a: str
    b: str
    relation: str
    similar_max: float
    keys: dict[str, str]
    fair_page: str
    k_ai_score: float
    series: dict[str, float]


def _pair_facts(content, block_key: str, item: str) -> _PairFacts:
    block, pair = content.blocks[block_key], content.pair(block_key, item)
    a, b = pair["a"], pair["b"]
    fair = _fair_score_source(content, block["pool"], a, b)
    fair_page = questions.page_key(content.blocks[fair[0]], fair[1]["key"]) if fair else ""
    k_ai = content.model_output(block["pool"], a, content.blocks[fair[0]]["model"]) if fair else {}
    (ref_total, ref_trend), (comp_total, comp_trend) = (
        _series_facts(content.subject(block["pool"], a)),
        _series_facts(content.subject(block["pool"], b)),
    )
    return _PairFacts(
        questions.block_set(block),
        a,
        b,
        pair.get("relation", ""),
        block["likert"]["similar_max"],
        {m: questions.page_key(block, item, m) for m in PAIR_COLUMNS},
        fair_page,
        k_ai.get("score", np.nan),
        {"ref_total": ref_total, "comp_total": comp_total, "ref_trend": ref_trend, "comp_trend": comp_trend},
    )


def _fair_score_source(content, pool: str, a: str, b: str) -> tuple[str, dict] | None:
    """The first fair-score block (a block over sets) of ``pool`` with a set whose reference is ``a`` and
    whose comparisons include ``b``: (block key, set)."""
    for block in content.blocks.values():
        if block["type"] == "task" and block["pool"] == pool:
            for sset in block.get("sets", []):
                if sset["reference"] == a and b in sset["comparisons"]:
                    return block["key"], sset
    return None


LIKERT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["points", "labels"],
    "properties": {
        "points": {"type": "integer", "minimum": 2, "maximum": 11},
        "labels": {"type": "array", "items": SHOWN},
        "similar_max": {"type": "integer", "minimum": 1},
    },
}
DEFAULT_LIKERT_LABELS = (
    gettext_noop("Very similar"),
    gettext_noop("Similar"),
    gettext_noop("Somewhat similar"),
    gettext_noop("Somewhat different"),
    gettext_noop("Different"),
    gettext_noop("Very different"),
)
DEFAULT_BTS_PROMPT = gettext_noop(
    "What percentage of other participants do you think chose a 'similar' answer "
    "(any of the similar options) to this question?"
)


def _all_series(pool: dict) -> bool:
    """Every subject of the pool has a series (then a pair has trajectory and aggregate measures)."""
    return all("series" in s for s in pool.get("subjects", []))


def likert_defaults(likert: dict) -> dict:
    """The Likert scale with its defaults: 6 labelled points, 'similar' up to the middle."""
    out = dict(likert)
    out.setdefault("points", 6)
    if "labels" not in out:
        points = out["points"]
        out["labels"] = (
            [gettext(label) for label in DEFAULT_LIKERT_LABELS] if points == 6 else [str(i + 1) for i in range(points)]
        )
    out.setdefault("similar_max", out["points"] // 2)
    return out


class PairDistance(BlockTask):
    kinds = ("pair_distance",)
    name = "pair_distance"
    format1_part = "pairs"
    measures = {
        "trajectory": Column(
            "integer", "Trajectory distance d_E (Likert, 1 = most similar).", "1..points", bounds=(1, 11)
        ),
        "aggregate": Column("integer", "Aggregate distance d_S (Likert).", "1..points", bounds=(1, 11)),
        "overall": Column("integer", "Overall input-space distance d (Likert).", "1..points", bounds=(1, 11)),
        "prediction": Column(
            "number", "BTS prediction: percent of others expected to answer 'similar'.", "0..100", bounds=(0, 100)
        ),
        "factors": Column("string", "Rationale factors named (text, comma-separated).", "trajectory, aggregate, other"),
        "factor_text": Column("string", "The other factor, in the participant's words (text)."),
    }
    options = {
        **PAIRS.option,
        "measures": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"enum": list(LIKERT_QUESTIONS)}},
        "likert": LIKERT,
        "rationale_factors": {"type": "boolean"},
        **BTS,
        "page_key": PAGE_KEY,
    }
    needs = ("pairs",)
    item_shape = PAIRS
    export_table = "pairs"
    no_builder_template = (
        "not yet: its trajectory and aggregate questions compare the subjects' risk-score series, which a CSV of "
        "one row per subject does not hold, so the effort design is written as a study file "
        "(studies/bundled/effort_demo.json, or its format 2 conversion: convert_study); for pairs of a CSV's "
        "subjects the builder has the comparable (pair_comparable), choice and triplet templates"
    )
    default_bts_prompt = DEFAULT_BTS_PROMPT
    yields = {Yield.ALPHA: "overall"}  # Eq. 5: overall d on d_S and d_E
    estimators = ("fairness.rater_group_alpha.alpha_by_rater_group",)
    analysis = "fairness.task_blocks.pair_distance_block"
    report_tables = {
        "alpha": ReportTable(
            "effort weight alpha by rater group",
            {
                "condition": "Condition",
                "rater_group": "Rater group",
                "alpha": "alpha",
                "ci": CI_LABEL,
                "estimand": "Estimand of the CI",
                "ci_participants": "95% CI, these pairs",
                "ci_stimuli": "95% CI, generalising over pairs",
                "n_participants": "Participants",
                "n_observations": "Pairs rated",
                "note": "Note",
            },
            Explanation(
                "The effort weight alpha per rater group: how much each group's overall similarity ratings rest on the "
                "trajectory rather than the aggregate.",
                "alpha near 1 means judged mostly by trajectory, near 0 mostly by aggregate; compare the groups' 95% "
                "CIs: 'these pairs' resamples the group's participants (alpha for the block's rated pairs), "
                "'generalising over pairs' also resamples the pairs (two-way bootstrap; alpha for pairs like them, "
                "the group's CI with analysis.generalise = stimuli).",
                "alpha = a2 / (a1 + a2) from d = a0 + a1 d_S + a2 d_E + e, per group",
                f"{EFFORT}, Eq. 5",
            ),
            headline="alpha",
            procedures=("alpha, for these pairs", "alpha, for pairs like these"),
        ),
    }

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_pairs(block, pool, base, add, memo)
        series = once(memo, (pool["key"], "series"), lambda: _all_series(pool))
        for mi, measure in enumerate(block.get("measures", [])):
            if measure != "overall" and not series:
                add(f"{base}.measures[{mi}]", f"{measure!r} needs subjects with a series (only 'overall' without)")

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        series = _all_series(pool)
        block.setdefault("measures", list(LIKERT_QUESTIONS) if series else ["overall"])
        block["likert"] = likert_defaults(block.get("likert", {}))
        block.setdefault("rationale_factors", False)
        if "bts" in block:
            block["bts"].setdefault(
                "measures", ["overall"] if "overall" in block["measures"] else block["measures"][:1]
            )

    def item_pages(self, block: dict, page: Page) -> list[Page]:
        """One page per measure of the pair, keyed ``<block>/<item>/<measure>``."""
        return [{**page, "key": questions.page_key(block, page["item"], m), "measure": m} for m in block["measures"]]

    def pages_per_item(self, block: dict, pool: dict, memo: dict | None = None) -> int:
        if "measures" in block:
            return len(block["measures"])
        series = once({} if memo is None else memo, (pool.get("key"), "series"), lambda: _all_series(pool))
        return len(LIKERT_QUESTIONS) if series else 1

    def export_rows(self, pages: list[dict], found: FoundAnswers, content, seconds) -> list[dict]:
        """The pairs table: one row per block x pair. ``set`` is the block, ``set_position`` its place among
        the participant's pair-distance blocks, ``pair_position`` the pair's place in the block, measures
        not asked are blank. The output-space columns come from a fair-score block over the same pool whose
        set has reference a and comparison b (blank without one); ``desirable``, the condition's, is added
        with the participant's columns (``research.export_answers.task_table_rows``)."""
        number, text = found.number, found.text
        items: dict[tuple[str, str], dict] = {}
        for page in pages:
            items.setdefault((page["block"], page["item"]), page)
        block_order = list(dict.fromkeys(block for block, _ in items))
        rows = []
        for (block_key, item), page in items.items():
            fixed = content.derived(
                ("pair distance export", block_key, item), partial(_pair_facts, content, block_key, item)
            )
            keys, fair_page = fixed.keys, fixed.fair_page
            overall = number(keys["overall"], "overall")
            factors = text(keys["overall"], "factors").split(",")
            k_score, fair_score = number(fair_page, "k_score"), number(fair_page, "fair_score", fixed.b)
            rows.append(
                {
                    "set": fixed.set,
                    "set_position": block_order.index(block_key),
                    "reference": fixed.a,
                    "comparison": fixed.b,
                    "relation": fixed.relation,
                    "pair_position": page.get("position", np.nan),
                    **{column: number(keys[m], m) for m, column in PAIR_COLUMNS.items()},
                    "overall_similar": np.nan if np.isnan(overall) else float(overall <= fixed.similar_max),
                    "prediction_similar": number(keys["overall"], "prediction"),
                    "factor_trajectory": int("trajectory" in factors),
                    "factor_aggregate": int("aggregate" in factors),
                    "factor_other": int("other" in factors),
                    "factor_text": text(keys["overall"], "factor_text"),
                    "k_ai_score": fixed.k_ai_score,
                    "k_accepted": number(fair_page, "k_accept"),
                    "k_score": k_score,
                    "fair_score": fair_score,
                    "output_distance": abs(k_score - fair_score),
                    "rationale": text(fair_page, "rationale", fixed.b),
                    **fixed.series,
                    **{column: seconds(keys[m]) for m, column in SECONDS_COLUMNS.items()},
                }
            )
        return rows

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """A 'similar' rating (at most ``similar_max``) of the first measure with a BTS follow-up."""
        if "bts" not in block:
            return None
        likert = likert_defaults(block.get("likert", {}))
        return BtsPositive((block["bts"].get("measures") or ["overall"])[0], high=likert["similar_max"])

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block = index.block(page)
        measure = page["measure"]
        return PairDistanceForm(
            data,
            measure=measure,
            question=pair_question_text(page, index),
            labels=block["likert"]["labels"],
            prediction_prompt=block["bts"]["prompt"] if _asks_prediction(block, measure) else None,
            factors=measure == "overall" and block["rationale_factors"],
            keys=PairKeys(questions.answer_set(block), page["item"], _stored_subject(block, page["item"]), block),
        )

    def context(self, page: Page, index: PageIndex) -> dict:
        pair = index.pair(page)
        names = _names(index, page)
        pool = index.pool_of(page)
        cards = [index.card(pool["key"], side, name) for side, name in zip((pair["a"], pair["b"]), names, strict=True)]
        ctx: dict[str, Any] = {
            "names": names,
            "cards": cards,
            "chart": index.pair_chart(pool["key"], pair["a"], pair["b"], names),
        }
        if page["measure"] == "aggregate" and ctx["chart"]:
            subjects = (index.subject(pool["key"], pair["a"]), index.subject(pool["key"], pair["b"]))
            ctx["totals"] = [(name, sum(s["series"])) for name, s in zip(names, subjects, strict=True)]
            ctx["unit"] = pool["display"]["chart"].get("unit", "")
        return ctx

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """Ratings on the P-point scale: d_E = 1 + (P - 1) * clip(t + N(0, 0.12)) from the true trajectory
        difference t, likewise d_S from the aggregate difference g, and the overall rating
        clip(round(alpha d_E + (1 - alpha) d_S + scale_shift + N(0, noise)), 1, P) (the effort-aware
        paper's Eq. 5 without intercept). The BTS prediction is the share of 'similar' answers the
        rater expects: P(overall <= similar_max) under its own mean and noise."""
        from simulation.raters import bts_prediction, share_below

        likert = index.block(page)["likert"]
        points = len(likert["labels"])
        t, g = _distance(index, page)
        d_e = 1 + (points - 1) * float(np.clip(t + rng.normal(0, 0.12), 0, 1))
        d_s = 1 + (points - 1) * float(np.clip(g + rng.normal(0, 0.12), 0, 1))
        mean = rater.alpha * d_e + (1 - rater.alpha) * d_s + rater.scale_shift
        rating = {"trajectory": d_e, "aggregate": d_s}.get(page["measure"], mean + rng.normal(0, rater.noise))
        rating = int(np.clip(round(rating), 1, points))
        data = {"rating": str(rating)}
        if _asks_prediction(index.block(page), page["measure"]):  # the page form's field, without building it
            similar_max = likert.get("similar_max", points // 2)
            p_similar = share_below(similar_max + 0.5, mean, rater.noise)
            data["prediction"] = bts_prediction(p_similar, rater, rng, own=rating <= similar_max)
        return data
