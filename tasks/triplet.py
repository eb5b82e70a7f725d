"""Triplet: which of two subjects is more similar to a third, the anchor ("Who is more similar to Person A:
Person B or Person C?"), similar in the sense of "should be treated alike" (the page says so). An optional
5-point strength ("How sure are you?"); an optional BTS follow-up when the block names a ``model``: the
share of other participants choosing the subject whose model score is closer to the anchor's (the prompt
names that subject without saying why, as ``choose`` does).

Answers: ``closer`` = 1 when B (``b`` of the triplet) is chosen as more similar to the anchor, 0 for C
(text: the chosen subject's id); ``ai_closer`` = 1 when the chosen subject is the one whose model score is
closer to the anchor's (with a BTS follow-up; not when the two are equally close). Analysed by a learned
fair metric (``fairness.human_metric.fit_metric``, ``kind="triplet"``) over the pool's feature columns,
for all participants and per rater group.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django import forms
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.caching import BoundedCache
from core.columns import Column
from core.report_texts import CI_LABEL, Explanation, ReportTable
from tasks.base import Adaptive, AnswerInput, BlockTask, BtsPositive, BuilderInput
from tasks.drawing import TRIPLET_RELATIONS, drawn_items
from tasks.fields import CONFIDENCE_LABELS, follow_ups, prediction_field, scale_field
from tasks.item_shapes import TRIPLETS, TripletItem
from tasks.labels import page_labels
from tasks.page_index import Block, Page, PageIndex, Pool
from tasks.questions import task_question
from tasks.schema import BTS, MODEL, QUESTION, check_model, duplicates, once
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

_POOL_FEATURES: BoundedCache[dict[str, Any]] = BoundedCache(size=32)  # a simulated rater's scaled features


def _pool_features(pool: Pool) -> dict[str, Any]:
    """``simulation.metric.pool_features`` of the pool, kept by the pool's content (a simulated participant
    answers every triplet page of the pool from the same features; building them is a data frame's work)."""
    from simulation.metric import pool_features

    key = hashlib.sha256(json.dumps(pool, sort_keys=True, default=str).encode()).hexdigest()
    return _POOL_FEATURES.get(key) or _POOL_FEATURES.put(key, pool_features(pool))


DEFAULT_QUESTION = gettext_noop("Who is more similar to {anchor}: {b} or {c}?")
SIMILAR_MEANS = _("Similar here means: a fair decision should treat the two alike.")
METRIC_COLUMNS = {
    "rater_group": "Rater group",
    "feature": "Feature",
    "weight": "Weight",
    "ci": CI_LABEL,
    "n_judgements": "Judgements",
    "n_raters": "Raters",
    "note": "Note",
}


def names(index: PageIndex, page: Page) -> tuple[str, str, str]:
    """The anchor's and the two others' names on the page: "<Noun> A", "<Noun> B", "<Noun> C"."""
    anchor, b, c = page_labels(index, page, 3)
    return anchor, b, c


# Why a triplet page of a block with the BTS follow-up has none (the follow-up asks about the AI's choice).
NO_BTS_ON_A_TIE = gettext_noop(
    "This page has no question about other participants' answers: the AI scores %(b)s and %(c)s as equally "
    "close to %(a)s, so there is no AI choice to ask about."
)


def ai_closer(index: PageIndex, page: Page) -> str | None:
    """``"b"`` or ``"c"``: the one whose model score is closer to the anchor's; None without a model or on a tie."""
    block, triplet = index.block(page), index.triplet(page)
    if not block.get("model"):
        return None
    anchor, b, c = (
        index.model_output(block["pool"], subject, block["model"]).get("score")
        for subject in (triplet["anchor"], triplet["b"], triplet["c"])
    )
    if anchor is None or b is None or c is None:
        return None
    gap_b, gap_c = abs(b - anchor), abs(c - anchor)
    return None if gap_b == gap_c else ("b" if gap_b < gap_c else "c")


class TripletForm(forms.Form):
    def __init__(
        self, *args, page: Page, triplet: TripletItem, question: str, shown: tuple, block: Block, ai, **kwargs
    ):
        super().__init__(*args, **kwargs)
        self.page, self.triplet, self.ai = page, triplet, ai
        message = gettext("Choose %(b)s or %(c)s.") % {"b": shown[1], "c": shown[2]}
        self.fields["closer"] = forms.ChoiceField(
            label=question,
            choices=[("b", shown[1]), ("c", shown[2])],
            widget=forms.RadioSelect,
            error_messages={"required": message, "invalid_choice": message},
        )
        sure, prediction = follow_ups(block, ai)
        if sure:
            self.fields["sure"] = scale_field(gettext("How sure are you?"), CONFIDENCE_LABELS)
        if prediction:
            self.fields["prediction"] = prediction_field(
                block["bts"]["prompt"].replace("{closer}", shown["bc".index(ai) + 1])
            )

    def answers(self) -> list[AnswerInput]:
        block, item, chosen = self.page["block"], self.page["item"], self.cleaned_data["closer"]

        def answer(measure: str, number: float, text: str = "") -> AnswerInput:
            question = task_question(block, item, measure)
            return AnswerInput(question, measure, set_key=block, subject_key=item, number=number, text=text)

        closer = self.triplet["b"] if chosen == "b" else self.triplet["c"]
        out = [answer("closer", float(chosen == "b"), closer)]
        if "sure" in self.fields:
            out.append(answer("strength", self.cleaned_data["sure"]))
        if "prediction" in self.fields:
            out.append(answer("prediction", self.cleaned_data["prediction"]))
            out.append(answer("ai_closer", float(chosen == self.ai)))
        return out


def check_triplets(block: dict, pool: dict, base: str, add, memo: dict) -> None:
    """Each triplet's subjects are in the pool and differ; no triplet is listed twice (b and c either way)."""
    ids = once(memo, (pool["key"], "ids"), lambda: {s["id"] for s in pool["subjects"]})
    for xi, triplet in enumerate(block["triplets"]):
        for end in ("anchor", "b", "c"):
            if triplet[end] not in ids:
                add(f"{base}.triplets[{xi}].{end}", f"subject {triplet[end]!r} is not in pool {pool['key']!r}")
        if len({triplet["anchor"], triplet["b"], triplet["c"]}) < 3:
            add(f"{base}.triplets[{xi}]", "a triplet needs three different subjects")
    keys = [f"{t['anchor']} ({' / '.join(sorted((t['b'], t['c'])))})" for t in block["triplets"]]
    for dup in duplicates(keys):
        add(f"{base}.triplets", f"the triplet {dup} is listed twice")


class Triplet(BlockTask):
    name = "triplet"
    kinds = ("triplet",)
    measures = {
        "closer": Column(
            "0/1", "1 when the participant judged subject b of the triplet more similar to the anchor, 0 for c."
        ),
        "ai_closer": Column(
            "0/1",
            "1 when the chosen subject is the one whose AI score is closer to the anchor's (triplet blocks with BTS).",
        ),
        "strength": Column("integer", "How sure the participant is (1 = not at all).", "1..5", bounds=(1, 5)),
        "prediction": Column(
            "number",
            "BTS prediction: percent of others expected to choose the subject named.",
            "0..100",
            bounds=(0, 100),
        ),
    }
    options = {**TRIPLETS.option, **QUESTION, "strength": {"type": "boolean"}, **MODEL, **BTS}
    needs = ("triplets",)
    item_shape = TRIPLETS
    builder_template = "triplet"
    builder_description = "Triplets: who is more similar to Person A, Person B or Person C? (how sure)"
    builder_key = "triplets"
    builder_instructions = gettext_noop(
        "You will read descriptions of three people at a time: Person A and two others.\n\n"
        "For each group, choose which of the other two is more similar to Person A, in the sense that a fair "
        "decision should treat them alike, and say how sure you are. There are no right or wrong answers: we "
        "are interested in your own judgement."
    )
    builder_seconds = 35
    builder_relations = TRIPLET_RELATIONS
    builder_mix = ("near-far", "random")
    adaptive = Adaptive("triplet", "fairness.human_metric.triplet_design_fit", "closer")
    default_bts_prompt = gettext_noop("What percentage of other participants do you think chose {closer}?")
    yields = {Yield.METRIC: "closer"}
    estimators = ("fairness.human_metric.fit_metric",)
    weighs_features = True
    analysis = "tasks.triplet.analyse"
    report_tables = {
        "triplet_metric": ReportTable(
            "learned fair metric: feature weights by rater group (triplets)",
            METRIC_COLUMNS,
            Explanation(
                "How much a difference in each feature makes two people dissimilar, in the judgement of each "
                "rater group: the metric learned from which of two people they found more similar to a third.",
                "A larger weight means that a difference in that feature (its full range, or a change of value) "
                "counts more against treating two people alike; a weight near 0 means the feature is ignored. "
                "The weights are M's diagonal (a difference in one feature alone); M's off-diagonal entries, what "
                "differences in two features add together, are the m_with_<feature> columns of the CSV. CIs are "
                "full-M Wald intervals with rater-clustered errors (coverage measured by simulation: "
                "bench/coverage.py); the CSV also has basic bootstrap intervals resampling raters (ci_bootstrap).",
                "P(b more similar to anchor than c) = expit(d_M(anchor, c)^2 - d_M(anchor, b)^2), "
                "d_M(x, y)^2 = (x - y)' M (x - y), M positive semi-definite; weight = d_M^2 of the feature's "
                "full range alone",
                "Mukherjee, Yurochkin, Banerjee & Sun (ICML 2020); Bradley & Terry (1952)",
            ),
            estimate="weight",
            figure=("feature", "weight"),
            procedures=tuple(
                f"learned metric weights, triplet, {name}" for name in ("builder's size", "interacting features")
            ),
        )
    }

    def builder_block(self, source: BuilderInput) -> dict:
        """Triplets drawn by :func:`tasks.drawing.draw_triplets`, with "How sure are you?"."""
        return {"task": self.name, "triplets": drawn_items(self, source, "triplets"), "strength": True}

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_triplets(block, pool, base, add, memo)
        if "model" in block:
            check_model(block, pool, base, add, "score", memo)
        elif "bts" in block:
            add(
                f"{base}.bts",
                "the BTS follow-up asks for the share choosing the subject the AI scores closer: name a model",
            )

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_QUESTION))
        block.setdefault("strength", False)

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Choosing the subject whose AI score is closer to the anchor's (``ai_closer`` = 1)."""
        return BtsPositive("ai_closer", 1, 1) if "bts" in block else None

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block, shown = index.block(page), names(index, page)
        question = block["question"].format(anchor=shown[0], b=shown[1], c=shown[2])
        return TripletForm(
            data,
            page=page,
            triplet=index.triplet(page),
            question=question,
            shown=shown,
            block=block,
            ai=ai_closer(index, page),
        )

    def answer_bounds(self, page: Page, index: PageIndex) -> tuple[int, int]:
        """One answer per field, and with the BTS prediction also ``ai_closer`` (always: no "Equally")."""
        low, high = super().answer_bounds(page, index)
        extra = int("prediction" in self.form(page, index).fields)
        return low + extra, high + extra

    def context(self, page: Page, index: PageIndex) -> dict:
        triplet, pool = index.triplet(page), index.pool_of(page)["key"]
        shown = names(index, page)
        return {
            "names": shown,
            "similar_means": SIMILAR_MEANS,
            "anchor": index.card(pool, triplet["anchor"], shown[0]),
            "cards": [
                index.card(pool, end, name) for end, name in zip((triplet["b"], triplet["c"]), shown[1:], strict=True)
            ],
            "bts_note": gettext(NO_BTS_ON_A_TIE) % {"a": shown[0], "b": shown[1], "c": shown[2]}
            if "bts" in index.block(page) and ai_closer(index, page) is None
            else "",
        }

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """B chosen with logit P = ``simulation.metric.triplet_logit`` (the difference of the squared
        distances on the pool's scaled features) + leniency + N(0, noise); strength and the BTS prediction
        as for the yes/no tasks (``simulation.raters``)."""
        from simulation.metric import triplet_logit
        from simulation.raters import bts_prediction, draw_binary, draw_sureness

        triplet = index.triplet(page)
        features = _pool_features(index.pool_of(page))
        answer, p = draw_binary(triplet_logit(features, triplet["anchor"], triplet["b"], triplet["c"]), rater, rng)
        ai = ai_closer(index, page)
        sure, prediction = follow_ups(index.block(page), ai)  # the page form's fields, without building it
        data = {"closer": "bc"[1 - answer]}
        if sure:
            data["sure"] = draw_sureness(p, rng)
        if prediction:
            data["prediction"] = bts_prediction(p if ai == "b" else 1 - p, rater, rng, own=data["closer"] == ai)
        return data


def analyse(spec: dict, block: dict, answers, groups, opts):
    """The learned fair metric (``fairness.human_metric.fit_metric``, ``kind="triplet"``) over the pool's
    feature columns, from all participants' triplet answers and from each rater group's."""
    from analysis.bts import block_answers
    from fairness.human_metric import judgements_of, metric_by_rater_group, pool_frame
    from fairness.task_blocks import BlockAnalysis

    frame = block_answers(answers, block["key"], "closer")
    if frame.empty:
        return BlockAnalysis(block["key"], "triplet", {}, ["No triplet answers yet."])
    judgements = judgements_of(frame.assign(rater_group=frame["participant_id"].map(groups)), "triplet")
    subjects, features = pool_frame(next(p for p in spec["pools"] if p["key"] == block["pool"]))
    table, notes = metric_by_rater_group(
        judgements, subjects, features, kind="triplet", n_resamples=opts.n_resamples, seed=opts.seed
    )
    return BlockAnalysis(block["key"], "triplet", {"triplet_metric": table}, notes)
