"""Pair comparable: should subjects A and B be treated alike? Yes/no, optional 5-point strength
("How sure are you?") and optional BTS prediction of the share answering "Yes"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms
from django.utils.translation import gettext, gettext_noop

from core.columns import Column
from core.report_texts import GROUP_MEANS, RESAMPLING, YES_NO_MEANS, Explanation, ReportTable, TableView
from tasks.agree import ANSWER_YES_NO, BinaryTaskForm, binary_extras, bts_prompt
from tasks.base import Adaptive, BlockTask, BtsPositive, BuilderInput
from tasks.drawing import PAIR_RELATIONS, drawn_items
from tasks.fields import YES_NO
from tasks.item_shapes import PAIRS
from tasks.nouns import question_text
from tasks.page_index import Page, PageIndex
from tasks.pair_distance import _distance, _names
from tasks.schema import BTS, QUESTION, check_pairs
from tasks.triplet import METRIC_COLUMNS
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

DEFAULT_COMPARABLE_QUESTION = gettext_noop("Should these two {subject_nouns} be treated alike?")

# logit P(yes) = COMPARABLE_SLOPE * (1/2 - d) + leniency + noise, d the share of differing values
COMPARABLE_SLOPE = 4.0


PAIRS_SHOWN = 30  # pairs the report's table shows (the CSV has them all)


def divisive_pairs(pairs, limit: int = PAIRS_SHOWN):
    """The per-pair shares (a DataFrame) as one row per pair and one column per rater group, the ``limit``
    pairs on which the rater groups differ most first."""
    from fairness.rater_groups import ALL  # pandas: job workers only

    wide = pairs.pivot_table(index="pair", columns="rater_group", values="share", aggfunc="first")
    groups = [c for c in wide.columns if c != ALL]
    spread = wide[groups].max(axis=1) - wide[groups].min(axis=1)
    wide = wide[[ALL, *groups]].assign(spread=spread).sort_values("spread", ascending=False)
    return wide.head(limit).reset_index().rename_axis(columns=None)


class PairComparable(BlockTask):
    kinds = ("pair_comparable",)
    name = "pair_comparable"
    measures = {
        "comparable": Column("0/1", "1 when the participant says the two should be treated alike."),
        "strength": Column("integer", "How sure the participant is (1 = not at all).", "1..5", bounds=(1, 5)),
        "prediction": Column(
            "number", "BTS prediction: percent of others expected to answer 'yes'.", "0..100", bounds=(0, 100)
        ),
    }
    options = {**PAIRS.option, "strength": {"type": "boolean"}, **BTS, **QUESTION}
    needs = ("pairs",)
    item_shape = PAIRS
    builder_template = "comparable"
    builder_key = "pairs"
    builder_instructions = gettext_noop(
        "You will read descriptions of two people at a time.\n\n"
        "For each pair, say whether a decision maker should treat the two people alike, and how sure you are. "
        "There are no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 30
    builder_relations = PAIR_RELATIONS
    builder_mix = ("near", "far")
    adaptive = Adaptive("comparable", "fairness.human_metric.comparable_design_fit", "comparable")
    builder_description = "Comparable pairs: should these two people be treated alike? (yes/no, how sure)"
    default_bts_prompt = gettext_noop("What percentage of other participants do you think answered 'Yes'?")
    yields = {Yield.METRIC: "comparable"}
    estimators = ("fairness.rater_groups.rater_group_difference_tests", "fairness.human_metric.fit_metric")
    weighs_features = True
    analysis = "fairness.task_blocks.pair_comparable_block"
    report_tables = {
        "shares": ReportTable(
            "share 'treat alike' by rater group",
            {**GROUP_MEANS, "mean": "Share"},
            Explanation(
                "The share of 'should be treated alike' answers over all pairs, for all participants and per rater "
                "group.",
                "A higher share means the group sees more pairs as similar people; the tests table says whether the "
                "groups differ beyond chance.",
                f"share_r = answers 'yes' of group r / answers of group r; {RESAMPLING}",
                "Individual fairness: pairs judged alike are the raw material of learned fairness metrics, Dwork et "
                "al. (2012)",
            ),
            estimate="mean",
            procedures=YES_NO_MEANS,
        ),
        "pairs": ReportTable(
            "share 'treat alike' per pair",
            {"pair": "Pair", "rater_group": "Rater group", "share": "Share", "n_answers": "Answers"},
            Explanation(
                "The share of 'treat alike' answers for each pair, overall and per rater group.",
                "Pairs near 1 are seen as alike by nearly everyone, near 0.5 divide the raters; few answers per pair "
                "give coarse shares.",
                "share = answers 'yes' / answers, per pair",
                "Individual fairness judgements, Dwork et al. (2012)",
            ),
        ),
        "comparable_metric": ReportTable(
            "learned fair metric: feature weights by rater group (comparable pairs)",
            METRIC_COLUMNS,
            Explanation(
                "How much a difference in each feature makes two people not comparable, in the judgement of each "
                "rater group: the metric learned from which pairs they said should be treated alike.",
                "A larger weight means that a difference in that feature (its full range, or a change of value) "
                "counts more against treating two people alike; a weight near 0 means the feature is ignored. "
                "The weights are M's diagonal (a difference in one feature alone); M's off-diagonal entries, what "
                "differences in two features add together, are the m_with_<feature> columns of the CSV. CIs are "
                "full-M Wald intervals with rater-clustered errors (coverage measured by simulation: "
                "bench/coverage.py); the CSV also has basic bootstrap intervals resampling raters (ci_bootstrap).",
                "P(treat alike) = 2 / (1 + exp(d_M(a, b)^2)), d_M(x, y)^2 = (x - y)' M (x - y), M positive "
                "semi-definite; weight = d_M^2 of the feature's full range alone",
                "EXPLORE, Mukherjee, Yurochkin, Banerjee & Sun (ICML 2020)",
            ),
            estimate="weight",
            figure=("feature", "weight"),
            procedures=tuple(
                f"learned metric weights, comparable, {name}" for name in ("builder's size", "interacting features")
            ),
        ),
        "agreement": ReportTable(
            "agreement among raters (Fleiss' kappa)",
            {"rater_group": "Rater group", "kappa": "Kappa", "n_items": "Pairs", "raters_per_item": "Raters/pair"},
            Explanation(
                "How far raters agree on which pairs should be treated alike, overall and within each rater group.",
                "Kappa 1 is full agreement, 0 no more than chance; it uses the pairs with the most common number of "
                "answers.",
                "Fleiss' kappa = (P_o - P_e) / (1 - P_e) over the yes/no answers per pair",
                "Fleiss (1971); statsmodels fleiss_kappa",
            ),
        ),
    }

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        check_pairs(block, pool, base, add, memo)

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_COMPARABLE_QUESTION))
        block.setdefault("strength", False)

    def present(self, name: str, frame) -> TableView:
        """The ``pairs`` table: the pairs that divide the rater groups most (:func:`divisive_pairs`)."""
        if name != "pairs":
            return super().present(name, frame)
        shown = divisive_pairs(frame)
        columns = {c: {"pair": "Pair", "spread": "Spread"}.get(c, c) for c in shown.columns}
        note = f"The {len(shown)} pairs on which the rater groups differ most; every pair is in the CSV."
        return TableView(shown, columns, (note,))

    def builder_block(self, source: BuilderInput) -> dict:
        """Pairs drawn by :func:`tasks.drawing.draw_pairs` over the feature columns, with "How sure are you?"."""
        return {"task": self.name, "pairs": drawn_items(self, source, "pairs"), "strength": True}

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Answering "Yes, treat them alike" (1)."""
        return BtsPositive("comparable", 1, 1) if "bts" in block else None

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block = index.block(page)
        return BinaryTaskForm(
            data,
            page=page,
            block=block,
            question=question_text(block["question"], index.pool_of(page)),
            choices=YES_NO,
            required_message=gettext(ANSWER_YES_NO),
            answer_measure="comparable",
            sure_label=gettext("How sure are you?") if block["strength"] else None,
            sure_measure="strength",
            prediction_prompt=bts_prompt(block),
        )

    def context(self, page: Page, index: PageIndex) -> dict:
        pair, pool = index.pair(page), index.pool_of(page)["key"]
        names = _names(index, page)
        return {
            "names": names,
            "cards": [index.card(pool, side, name) for side, name in zip((pair["a"], pair["b"]), names, strict=True)],
        }

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """Yes with logit P = COMPARABLE_SLOPE * (1/2 - d) + leniency + N(0, noise), d the pair's
        difference (``pair_distance._distance``, mean of its two parts)."""
        from simulation.raters import draw_binary

        d = sum(_distance(index, page)) / 2
        answer, p = draw_binary(COMPARABLE_SLOPE * (0.5 - d), rater, rng)
        return binary_extras(self.form(page, index), {"answer": str(answer)}, p, rater, rng)
