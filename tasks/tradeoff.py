"""Trade-off: which of two models is fairer, seen through their outcomes on the same pool (the field's model
trade-off stimulus: Srivastava et al. KDD 2019, "Mathematical notions vs. human perception of fairness";
Harrison et al. FAccT 2020, "An empirical study on the perceived fairness of realistic, imperfect machine
learning models"). A page shows models A and B side by side per subject group: selection rate, false
positive rate, false negative rate and accuracy, as bars (server-rendered SVG, no script) with the numbers
in text, computed from the pool's true outcomes (``outcome_column``) and each model's labels. The
participant chooses the model they find fairer and, with ``strength``, may say how sure (optional). With
``label_names`` and ``outcome_names`` (both or neither) each rate is explained in the study's words ("share of
the people who did not reoffend who were labelled high risk"), else in general terms.

Design: an item (shape ``comparisons``, "model comparisons") is a pair of models on a sub-pool (``subjects``;
the whole pool when omitted). One pair on one pool gives one difference of gaps, from which the weights
cannot be told apart; comparisons of several models on different random sub-pools vary the gaps
independently, so the block is refused unless its comparisons' differences span all four
(:func:`identified_weights`); the builder template draws such comparisons (:meth:`Tradeoff.builder_block`).
Two models a page: the conditional logit over two alternatives is the logit on their differences, the
project's rater-clustered ``analysis.clustered.clustered_logit``; several models enter through their pairs.

Answers: ``fairer`` = 1 when model a of the comparison (A on the page) is chosen, 0 for b (text: the chosen
model's key); ``strength`` 1..5 when given. Analysed per rater group by Bradley-Terry strengths of the models
(``analysis.paired_comparison.bradley_terry``) and by the trade-off weights: a conditional logit of the
choice on the differences x_A - x_B of (accuracy, FPR gap, FNR gap, selection-rate gap)
(``analysis.tradeoff.tradeoff_weights``), both with rater-clustered CR1 intervals. A gap is Fairlearn's
``difference()``: the largest minus the smallest rate over the groups. The type yields the trade-off weights
(``audit_models --tradeoff-from``: each audited model scored by them). Its answers also make the export's
``model_comparisons`` table (:meth:`Tradeoff.export_rows`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from django import forms
from django.utils.translation import gettext, gettext_noop, ngettext

from core.columns import Column
from core.report_texts import CI_LABEL, Explanation, ReportTable
from tasks.base import AnswerInput, BlockTask, BuilderInput, BuilderProblem, FoundAnswers
from tasks.choose import Choose
from tasks.fields import CONFIDENCE_LABELS, scale_field
from tasks.item_shapes import MODEL_COMPARISONS, ModelComparisonItem
from tasks.page_index import Page, PageIndex
from tasks.questions import task_question
from tasks.schema import BINARY_NAMES, KEY, QUESTION, duplicates
from tasks.yields import Yield

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from simulation.raters import SimulatedRater

DEFAULT_QUESTION = gettext_noop("Which model is fairer?")
NAMES = (gettext_noop("Model A"), gettext_noop("Model B"))
# The outcome rates a page shows per group (Fairlearn's names), and the features the trade-off weights weigh:
# a model's accuracy and the gaps (largest - smallest over the groups) of three of its rates.
RATES = {
    "selection_rate": gettext_noop("Selection rate"),
    "false_positive_rate": gettext_noop("False positive rate"),
    "false_negative_rate": gettext_noop("False negative rate"),
    "accuracy": gettext_noop("Accuracy"),
}
RATE_HELP = {
    "selection_rate": gettext_noop("share labelled positive"),
    "false_positive_rate": gettext_noop("share of true negatives labelled positive"),
    "false_negative_rate": gettext_noop("share of true positives labelled negative"),
    "accuracy": gettext_noop("share labelled correctly"),
}
# The same in the block's words when it names the labels and the outcomes (``label_names``, ``outcome_names``:
# e.g. labelled "high risk", people who "did not reoffend").
NAMED_RATE_HELP = {
    "selection_rate": gettext_noop("share labelled %(label_1)s"),
    "false_positive_rate": gettext_noop("share of the people who %(outcome_0)s who were labelled %(label_1)s"),
    "false_negative_rate": gettext_noop("share of the people who %(outcome_1)s who were labelled %(label_0)s"),
    "accuracy": gettext_noop("share labelled correctly"),
}
FEATURES = ("accuracy", "fpr_gap", "fnr_gap", "selection_rate_gap")
FEATURE_RATES = {
    "fpr_gap": "false_positive_rate",
    "fnr_gap": "false_negative_rate",
    "selection_rate_gap": "selection_rate",
}
# simulate(): the logit of choosing A is SIMULATED_WEIGHTS . (x_A - x_B) (+ the rater's leniency and noise)
SIMULATED_WEIGHTS = {"accuracy": 8.0, "fpr_gap": -10.0, "fnr_gap": -4.0, "selection_rate_gap": -6.0}
RANK_TOLERANCE = 1e-9
# The builder template: each pair of models on SUBPOOLS_PER_PAIR random halves of the pool (at most SUBPOOL_MAX
# subjects; SUBPOOL_TRIES draws for one with both outcomes in every group), MIN_COMPARISONS to MAX_COMPARISONS.
SUBPOOLS_PER_PAIR = 4
MIN_COMPARISONS = 8
MAX_COMPARISONS = 30
SUBPOOL_MAX = 200
SUBPOOL_TRIES = 20
BAR_WIDTH = 220  # the SVG's bar at a rate of 1 (viewBox units), after the bar's label
LABEL_WIDTH = 62  # "Model A" before each bar
GROUP_HEIGHT = 50  # a group's name and its two bars


class TradeoffProblem(ValueError):
    """A sub-pool whose models' rates cannot be computed (the message says why)."""


@dataclass(frozen=True)
class GroupRates:
    """One model's rates in one subject group (``n`` subjects)."""

    group: str
    n: int
    selection_rate: float
    false_positive_rate: float
    false_negative_rate: float
    accuracy: float


@dataclass(frozen=True)
class ModelOutcomes:
    """One model's rates by group on a (sub-)pool, its overall ``accuracy`` and the trade-off ``features``."""

    model: str
    groups: tuple[GroupRates, ...]
    accuracy: float

    @property
    def features(self) -> dict[str, float]:
        """accuracy and, per rate, its gap: max - min over the groups (Fairlearn ``difference()``)."""
        gaps = {
            f: max(getattr(g, r) for g in self.groups) - min(getattr(g, r) for g in self.groups)
            for f, r in FEATURE_RATES.items()
        }
        return {"accuracy": self.accuracy, **gaps}


def _value(subject: dict, column: str):
    """A subject's group or feature ``column`` (``studies.format2.subject_value``; None when it has none)."""
    return subject.get("groups", {}).get(column, subject.get("features", {}).get(column))


def model_outcomes(pool: Mapping[str, Any], subject_ids: list[str] | None, model: str, group: str) -> ModelOutcomes:
    """``model``'s rates by the subjects' ``group`` on the pool (or the subjects ``subject_ids``): selection
    rate P(label = 1), FPR P(label = 1 | outcome = 0), FNR P(label = 0 | outcome = 1), accuracy
    P(label = outcome). :class:`TradeoffProblem` for a subject without the model's label or the group, or a
    group without both outcomes (its FPR or FNR would be undefined), or fewer than two groups."""
    subjects = {s["id"]: s for s in pool["subjects"]}
    chosen = [subjects[i] for i in subject_ids] if subject_ids else list(subjects.values())
    outcome = pool.get("outcome_column", "")
    cells: dict[str, list[tuple[int, int]]] = {}
    for subject in chosen:
        label = subject.get("models", {}).get(model, {}).get("label")
        value = _value(subject, group)
        if label is None:
            raise TradeoffProblem(f"subject {subject['id']!r} has no label from model {model!r}")
        if value is None:
            raise TradeoffProblem(f"subject {subject['id']!r} has no value of {group!r}")
        truth = subject["outcome"] if "outcome" in subject else _value(subject, outcome)  # format2.subject_outcome
        cells.setdefault(str(value), []).append((int(truth), int(label)))
    if len(cells) < 2:
        raise TradeoffProblem(f"{group!r} has {len(cells)} value(s) among the subjects; the gaps need two groups")
    rates = []
    for name, rows in sorted(cells.items()):
        negatives = [label for truth, label in rows if truth == 0]
        positives = [label for truth, label in rows if truth == 1]
        if not negatives or not positives:
            missing = "negative (0)" if not negatives else "positive (1)"
            raise TradeoffProblem(
                f"group {name!r} has no subject with a {missing} outcome: its error rates are undefined"
            )
        rates.append(
            GroupRates(
                name,
                len(rows),
                sum(label for _, label in rows) / len(rows),
                sum(negatives) / len(negatives),
                1 - sum(positives) / len(positives),
                sum(truth == label for truth, label in rows) / len(rows),
            )
        )
    correct = sum(g.accuracy * g.n for g in rates)
    return ModelOutcomes(model, tuple(rates), correct / sum(g.n for g in rates))


def differences(pool: Mapping[str, Any], block: Mapping[str, Any], comparison: Mapping[str, Any]) -> dict[str, float]:
    """x_a - x_b of the trade-off features (:data:`FEATURES`) of a comparison's two models."""
    a, b = (model_outcomes(pool, comparison.get("subjects"), comparison[side], block["group"]) for side in "ab")
    return {f: a.features[f] - b.features[f] for f in FEATURES}


def identified_weights(rows: list[list[float]]) -> int:
    """The rank of the comparisons' difference rows (Gaussian elimination with partial pivoting): how many
    trade-off weights the block's choices can identify (all of :data:`FEATURES` need a full rank)."""
    matrix = [list(map(float, row)) for row in rows]
    rank, columns = 0, len(matrix[0]) if matrix else 0
    for column in range(columns):
        pivot = max(range(rank, len(matrix)), key=lambda r: abs(matrix[r][column]), default=None)
        if pivot is None or abs(matrix[pivot][column]) <= RANK_TOLERANCE:
            continue
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        for r in range(rank + 1, len(matrix)):
            factor = matrix[r][column] / matrix[rank][column]
            matrix[r] = [x - factor * y for x, y in zip(matrix[r], matrix[rank], strict=True)]
        rank += 1
    return rank


def _percent(value: float) -> str:
    return f"{100 * value:.0f}%"


def rate_help(block: Mapping[str, Any]) -> dict[str, str]:
    """What each rate is, in the block's words when it names its labels and outcomes, else in general terms."""
    if "label_names" not in block:
        return {rate: gettext(text) for rate, text in RATE_HELP.items()}
    words = {f"label_{k}": v for k, v in block["label_names"].items()}
    words |= {f"outcome_{k}": v for k, v in block["outcome_names"].items()}
    return {rate: gettext(text) % words for rate, text in NAMED_RATE_HELP.items()}


def chart(pool: Mapping[str, Any], block: Mapping[str, Any], comparison: Mapping[str, Any]) -> list[dict]:
    """What the page shows: per rate, per group (at ``y`` in the SVG, its name and size in ``label``), one bar
    per model (A, B) with its width in the SVG's units, its ``y`` and its value in text; the SVG's ``height``."""
    outcomes = [model_outcomes(pool, comparison.get("subjects"), comparison[side], block["group"]) for side in "ab"]
    names = [gettext(name) for name in NAMES]
    helps = rate_help(block)
    pairs = list(zip(outcomes[0].groups, outcomes[1].groups, strict=True))
    return [
        {
            "label": gettext(label),
            "help": helps[rate],
            "height": GROUP_HEIGHT * len(pairs),
            "groups": [
                {
                    "group": rates_a.group,
                    "label": ngettext("%(group)s: %(n)d person", "%(group)s: %(n)d people", rates_a.n)
                    % {"group": rates_a.group, "n": rates_a.n},
                    "y": GROUP_HEIGHT * g + 12,
                    "bars": [
                        {
                            "name": name,
                            "side": side,
                            "text": _percent(getattr(rates, rate)),
                            "width": round(BAR_WIDTH * getattr(rates, rate), 1),
                            "end": round(BAR_WIDTH * getattr(rates, rate), 1) + LABEL_WIDTH + 4,
                            "y": GROUP_HEIGHT * g + 17 + 15 * k,
                        }
                        for k, (side, name, rates) in enumerate(zip("ab", names, (rates_a, rates_b), strict=True))
                    ],
                }
                for g, (rates_a, rates_b) in enumerate(pairs)
            ],
        }
        for rate, label in RATES.items()
    ]


class TradeoffForm(forms.Form):
    def __init__(self, *args, page: Page, comparison: ModelComparisonItem, question: str, strength: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.page, self.comparison = page, comparison
        message = gettext("Choose Model A or Model B.")
        self.fields["choice"] = forms.ChoiceField(
            label=question,
            choices=[(side, gettext(name)) for side, name in zip("ab", NAMES, strict=True)],
            widget=forms.RadioSelect,
            error_messages={"required": message, "invalid_choice": message},
        )
        if strength:
            self.fields["sure"] = scale_field(
                gettext("How sure are you? (optional)"), CONFIDENCE_LABELS, required=False
            )

    def answers(self) -> list[AnswerInput]:
        """``fairer`` (1 = model a; its text the chosen model's key) and, when given, ``strength``."""
        chosen, sure = self.cleaned_data["choice"], self.cleaned_data.get("sure") or None  # "" when not given
        model = self.comparison["a"] if chosen == "a" else self.comparison["b"]
        given = [("fairer", float(chosen == "a"), model), ("strength", sure, "")]
        block, item = self.page["block"], self.page["item"]
        return [
            AnswerInput(task_question(block, item, measure), measure, block, item, number, text)
            for measure, number, text in given
            if number is not None
        ]


class Tradeoff(BlockTask):
    name = "tradeoff"
    kinds = ("tradeoff",)
    measures = {
        "fairer": Column(
            "0/1", "1 when the participant found model a of the comparison fairer, 0 for model b (text: its key)."
        ),
        "strength": Choose.measures["strength"],
    }
    options = {
        **MODEL_COMPARISONS.option,
        "group": KEY,
        **QUESTION,
        "strength": {"type": "boolean"},
        "label_names": BINARY_NAMES,
        "outcome_names": BINARY_NAMES,
    }
    needs = ("comparisons", "group")
    item_shape = MODEL_COMPARISONS
    export_table = "model_comparisons"
    yields = {Yield.TRADEOFF_WEIGHTS: "fairer"}
    estimators = ("analysis.paired_comparison.bradley_terry", "analysis.tradeoff.tradeoff_weights")
    analysis = "tasks.tradeoff.analyse"
    builder_template = "tradeoff"
    builder_description = (
        "Trade-off: which of two models is fairer, from their outcomes by group? (needs an outcome, a group "
        "and two or more models' labels)"
    )
    builder_key = "tradeoffs"
    builder_instructions = gettext_noop(
        "You will see how two AI models decided about the same group of people: how often each model selected "
        "people, how often it was wrong in each direction, and how often it was right, for each group.\n\n"
        "For each comparison, choose the model you find fairer, and say how sure you are if you wish. There are "
        "no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 45
    report_tables = {
        "model_strengths": ReportTable(
            "Bradley-Terry strengths of the models (found fairer) by rater group",
            {  # choose's strengths table, over models instead of subjects
                ("model" if name == "subject" else name): ("Model" if name == "subject" else label)
                for name, label in Choose.report_tables["strengths"].columns.items()
            },
            Explanation(
                "How often each rater group finds each model the fairer one when it is compared with another: the "
                "log-odds scale of the Bradley-Terry model, the first model (in sorted order) at 0.",
                "A model with a higher strength is found fairer more often; a difference of 1 means odds of e = 2.7 "
                "to 1 of choosing it. A strength and its CI are for s_m - s_reference; the CIs are clustered by rater "
                "(t on raters - 1 df), so a group needs at least two raters.",
                "P(m found fairer than n) = exp(s_m) / (exp(s_m) + exp(s_n)); CI of s_m - s_ref: -/+ t(G - 1) SE, "
                "CR1 = G/(G-1) rater-clustered sandwich over G raters",
                "Bradley & Terry (1952); Srivastava et al. (KDD 2019); Harrison et al. (FAccT 2020)",
            ),
            estimate="strength",
            figure=("model", "strength"),
            headline="strength",
            procedures=("strengths, rater-clustered",),
        ),
        "tradeoff_weights": ReportTable(
            "trade-off weights: what makes a model fairer, by rater group",
            {
                "rater_group": "Rater group",
                "feature": "Difference",
                "weight": "Weight",
                "ci": CI_LABEL,
                "standard_error": "SE (clustered)",
                "pvalue": "p",
                "n_raters": "Raters",
                "n_choices": "Choices",
            },
            Explanation(
                "How much each difference between two models moves a rater group's choice of the fairer one: a "
                "conditional logit on the differences of the models' accuracy and of their gaps between the subject "
                "groups in false positive rate, false negative rate and selection rate (each a rate, 0..1).",
                "A weight is the change in the log-odds of finding a model fairer per unit (100 percentage points) of "
                "the difference: positive for accuracy means more accurate models are found fairer; a negative weight "
                "for a gap means larger gaps are found less fair. Compare the gaps' weights to see which disparity a "
                "group minds most. CIs and p-values use rater-clustered standard errors (t with raters - 1 df).",
                "P(A found fairer than B) = expit(w . (x_A - x_B)), "
                "x = (accuracy, FPR gap, FNR gap, selection-rate gap), "
                "gap = max - min over groups; pooled logit MLE; CR1 = G/(G-1) rater-clustered sandwich over G raters",
                "McFadden (1974); Srivastava et al. (KDD 2019); Harrison et al. (FAccT 2020); Liang & Zeger (1986)",
            ),
            estimate="weight",
            figure=("feature", "weight"),
            procedures=("trade-off weights, rater-clustered",),
        ),
    }

    def builder_block(self, source: BuilderInput) -> dict:
        """Every pair of the CSV's models (those with labels) on :data:`SUBPOOLS_PER_PAIR` random sub-pools
        (at least :data:`MIN_COMPARISONS` comparisons in all, each sub-pool half the pool, at most
        :data:`SUBPOOL_MAX` subjects, with both outcomes in every group), grouped by the first group column;
        :class:`BuilderProblem` without an outcome, a group or two models, or when the draws do not identify
        the trade-off weights."""
        subjects = source.subjects
        models = sorted({m for s in subjects for m, out in s["models"].items() if "label" in out})
        groups = list(subjects[0].get("groups", {}))
        problems = [
            "the tradeoff template needs the true outcome: give --outcome-column"
            if "outcome" not in subjects[0]
            else "",
            "the tradeoff template needs a group to compare the models' rates by: give --group-columns"
            if not groups
            else "",
            f"the tradeoff template needs two or more models' labels (found {len(models)}): give --model-label-columns"
            " (and --label-column)"
            if len(models) < 2
            else "",
        ]
        if any(problems):
            raise BuilderProblem("; ".join(p for p in problems if p))
        pool = {"key": source.pool, "outcome_column": "outcome", "subjects": subjects}
        block = {"task": self.name, "group": groups[0], "strength": True}
        pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
        per_pair = max(SUBPOOLS_PER_PAIR, -(-MIN_COMPARISONS // len(pairs)))
        size = min(max(len(subjects) // 2, 2), SUBPOOL_MAX)
        rng = random.Random(0)
        ids = [s["id"] for s in subjects]
        comparisons: list[dict] = []
        for a, b in pairs * per_pair:
            for _ in range(SUBPOOL_TRIES):
                drawn = sorted(rng.sample(ids, size))
                comparison = {"key": f"c{len(comparisons) + 1}", "a": a, "b": b, "subjects": drawn}
                try:
                    differences(pool, block, comparison)
                except TradeoffProblem:
                    continue
                comparisons.append(comparison)
                break
            if len(comparisons) >= min(MAX_COMPARISONS, source.max_items):
                break
        rank = identified_weights([list(differences(pool, block, c).values()) for c in comparisons])
        if rank < len(FEATURES):
            raise BuilderProblem(
                f"the tradeoff template drew {len(comparisons)} comparisons of sub-pools of {size} subjects whose "
                f"differences identify {rank} of the {len(FEATURES)} trade-off weights: every group needs both "
                "outcomes in a sub-pool, and the models must differ in their rates (more subjects or models help)"
            )
        return {**block, "comparisons": comparisons}

    def export_rows(self, pages: list[dict], found: FoundAnswers, content, seconds) -> list[dict]:
        """The model_comparisons table: one row per answered comparison with its models, the choice, how sure
        and the differences x_a - x_b of :data:`FEATURES` (as :func:`differences`, once per comparison and
        version of the file)."""
        rows = []
        for page in pages:
            key, item = page["key"], page["item"]
            fairer = found.number(key, "fairer", item)
            if math.isnan(fairer):
                continue
            block = content.blocks[page["block"]]
            comparison = content.item(block["key"], item)
            pool = content.pools[block["pool"]]
            gaps = content.derived(
                ("tradeoff differences", block["key"], item), partial(differences, pool, block, comparison)
            )
            sure = found.number(key, "strength", item)
            rows.append(
                {
                    "block": block["key"],
                    "comparison": item,
                    "n_subjects": len(comparison.get("subjects") or pool["subjects"]),
                    "model_a": comparison["a"],
                    "model_b": comparison["b"],
                    "chosen": found.text(key, "fairer", item),
                    "fairer": int(fairer),
                    "strength": None if math.isnan(sure) else int(sure),
                    **gaps,
                    "seconds": seconds(key),
                }
            )
        return rows

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        """Each comparison names two different models with a label for each of its subjects, which are in the
        pool; each group has both outcomes; keys are unique; the comparisons identify the trade-off weights;
        label_names and outcome_names come together."""
        if ("label_names" in block) != ("outcome_names" in block):
            given, missing = (
                ("label_names", "outcome_names") if "label_names" in block else ("outcome_names", "label_names")
            )
            add(f"{base}.{missing}", f"{given} needs {missing} too: the rates are explained with both")
        if "outcome_column" not in pool:
            add(f"{base}.pool", f"pool {pool['key']!r} has no true outcomes (outcome_column): a trade-off needs them")
            return
        ids = {s["id"] for s in pool["subjects"]}
        for dup in duplicates([c["key"] for c in block["comparisons"]]):
            add(f"{base}.comparisons", f"the comparison key {dup!r} is used twice")
        rows = []
        for ci, comparison in enumerate(block["comparisons"]):
            where = f"{base}.comparisons[{ci}]"
            unknown = [s for s in comparison.get("subjects", []) if s not in ids]
            if unknown:
                add(f"{where}.subjects", f"subject {unknown[0]!r} is not in pool {pool['key']!r}")
                continue
            if comparison["a"] == comparison["b"]:
                add(where, "a comparison needs two different models")
                continue
            try:
                rows.append(list(differences(pool, block, comparison).values()))
            except TradeoffProblem as exc:
                add(where, str(exc))
        if len(rows) == len(block["comparisons"]) and (rank := identified_weights(rows)) < len(FEATURES):
            add(
                f"{base}.comparisons",
                f"the comparisons' differences in ({', '.join(FEATURES)}) identify only {rank} of the {len(FEATURES)} "
                "trade-off weights: compare more models, or the models on different sub-pools (subjects)",
            )

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_QUESTION))
        block.setdefault("strength", False)

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block = index.block(page)
        return TradeoffForm(
            data, page=page, comparison=index.comparison(page), question=block["question"], strength=block["strength"]
        )

    def context(self, page: Page, index: PageIndex) -> dict:
        block = index.block(page)
        comparison = index.comparison(page)
        pool = index.pool_of(page)
        return {
            "names": [gettext(name) for name in NAMES],
            "group": block["group"],
            "rates": chart(pool, block, comparison),
            "label_width": LABEL_WIDTH,
            "chart_width": LABEL_WIDTH + BAR_WIDTH + 40,
        }

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """A chosen with logit P = SIMULATED_WEIGHTS . (x_A - x_B) + leniency + N(0, noise)
        (``simulation.raters.draw_binary``); how sure as for the yes/no tasks."""
        from simulation.raters import draw_binary, draw_sureness

        block = index.block(page)
        gaps = differences(index.pool_of(page), block, index.comparison(page))
        answer, p = draw_binary(sum(SIMULATED_WEIGHTS[f] * gaps[f] for f in FEATURES), rater, rng)
        data = {"choice": "ab"[1 - answer]}
        if block["strength"]:
            data["sure"] = draw_sureness(p, rng)
        return data


def choices_of(spec: dict, block: dict, frame: pd.DataFrame, groups) -> pd.DataFrame:
    """A tradeoff block's "fairer" answers (``analysis.bts.block_answers``: participant_id, subject = the
    comparison's key, value 1 = a) as one row per choice: winner, loser (models), chose_a, the differences
    x_a - x_b of :data:`FEATURES`, rater_group and rater."""
    import pandas as pd

    pool = next(p for p in spec["pools"] if p["key"] == block["pool"])
    comparisons = {c["key"]: c for c in block["comparisons"]}
    gaps = pd.DataFrame({key: differences(pool, block, c) for key, c in comparisons.items()}).T
    a = frame["subject"].map(lambda key: comparisons[key]["a"])
    b = frame["subject"].map(lambda key: comparisons[key]["b"])
    chose_a = frame["value"] >= 0.5
    out = pd.DataFrame(
        {
            "winner": a.where(chose_a, b),
            "loser": b.where(chose_a, a),
            "chose_a": chose_a.astype(int),
            "rater_group": frame["participant_id"].map(groups),
            "rater": frame["participant_id"],
        }
    )
    return pd.concat([out, gaps.loc[frame["subject"]].set_axis(out.index)], axis=1)


def analyse(spec: dict, block: dict, answers, groups, opts):
    """Bradley-Terry strengths of the models (``analysis.paired_comparison.bradley_terry_by_group``) and the trade-off
    weights (``analysis.tradeoff.tradeoff_weights``) from all participants' choices and each rater group's,
    with rater-clustered CIs; a group the estimators cannot fit gets their reason."""
    from analysis.bts import block_answers
    from analysis.paired_comparison import bradley_terry_by_group
    from analysis.tradeoff import tradeoff_weights
    from fairness.task_blocks import BlockAnalysis

    frame = block_answers(answers, block["key"], "fairer")
    if frame.empty:
        return BlockAnalysis(block["key"], "tradeoff", {}, ["No choices yet."])
    choices = choices_of(spec, block, frame, groups)
    strengths = bradley_terry_by_group(choices[["winner", "loser", "rater", "rater_group"]], item="model")
    weights = tradeoff_weights(choices, by="rater_group")
    tables = {"model_strengths": strengths.table, "tradeoff_weights": weights.table}
    return BlockAnalysis(block["key"], "tradeoff", tables, [*strengths.notes, *weights.notes])
