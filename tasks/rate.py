"""Rate: a number or a Likert rating of one subject, optionally with the AI's score shown and, for
Likert scales, a BTS prediction of the share rating at or above ``positive_from``."""

from decimal import Decimal

import numpy as np
from django import forms

from core.columns import Column
from core.report_texts import CI_LABEL, GROUP_MEANS, ICC_COLUMNS, RESAMPLING, Explanation, ReportTable
from tasks import questions
from tasks.agree import bts_prompt
from tasks.base import AnswerInput, BlockTask, BtsPositive
from tasks.fields import prediction_field, scale_field
from tasks.schema import BTS, LABELS, MODEL, QUESTION, check_model


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def number_field(
    label: str, low: float | None, high: float | None, step: float | None, *, whole: bool | None = None
) -> forms.Field:
    """A number in [low, high] (either bound may be None). ``whole`` (default: the step and the bounds
    are whole numbers) asks for a whole number. Every error names the allowed range."""
    if whole is None:
        whole = all(float(v).is_integer() for v in (low, high, step or 1) if v is not None)
    kind = "a whole number" if whole else "a number"
    if low is not None and high is not None:
        message = f"Enter {kind} between {_shown(low)} and {_shown(high)}."
    elif low is not None:
        message = f"Enter {kind} of at least {_shown(low)}."
    elif high is not None:
        message = f"Enter {kind} of at most {_shown(high)}."
    else:
        message = f"Enter {kind}."
    attrs = {"step": step or (1 if whole else "any"), "inputmode": "numeric" if whole else "decimal"}
    attrs.update({name: bound for name, bound in (("min", low), ("max", high)) if bound is not None})

    def bound(value):
        return None if value is None else (int(value) if whole else Decimal(str(value)))

    field_class = forms.IntegerField if whole else forms.DecimalField
    return field_class(
        label=label,
        min_value=bound(low),
        max_value=bound(high),
        error_messages={key: message for key in ("required", "invalid", "min_value", "max_value")},
        widget=forms.NumberInput(attrs=attrs),
    )


class RateForm(forms.Form):
    def __init__(self, *args, page: dict, question: str, scale: dict, prediction_prompt: str | None, **kwargs):
        super().__init__(*args, **kwargs)
        self.page = page
        if scale["type"] == "likert":
            self.fields["rating"] = scale_field(question, scale["labels"])
        else:
            self.fields["rating"] = number_field(question, scale["min"], scale["max"], scale.get("step"))
        if prediction_prompt:
            self.fields["prediction"] = prediction_field(prediction_prompt)

    def answers(self) -> list[AnswerInput]:
        block, item = self.page["block"], self.page["item"]
        measures = {"rating": "rating", "prediction": "prediction"}
        return [
            AnswerInput(
                question=questions.task_question(block, item, measure),
                measure=measure,
                set_key=block,
                subject_key=item,
                number=float(self.cleaned_data[name]),
            )
            for name, measure in measures.items()
            if name in self.fields
        ]


class Rate(BlockTask):
    kinds = ("rate",)
    name = "rate"
    measures = {
        "rating": Column("number", "The rating: the Likert answer's 1-based index, or the number given.", "scale"),
        "prediction": Column("number", "BTS prediction: percent of others expected to rate positively.", "0..100"),
    }
    options = {
        "scale": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type"],
            "properties": {
                "type": {"enum": ["likert", "number"]},
                "labels": LABELS,
                "positive_from": {"type": "integer", "minimum": 2},
                "favourable": {"enum": ["lower", "higher"]},
                "min": {"type": "number"},
                "max": {"type": "number"},
                "step": {"type": "number", "exclusiveMinimum": 0},
            },
        },
        **MODEL,
        "show_model": {"type": "boolean"},
        **BTS,
        **QUESTION,
    }
    needs = ("scale", "question")
    builder_template = "rating"
    builder_description = "Rating: how risky is this person? (7-point scale)"
    default_bts_prompt = "What percentage of other participants do you think chose '{positive}' or higher?"
    estimators = (
        "fairness.rater_groups.rater_group_difference_tests",
        "analysis.agreement.rating_icc",
        "fairness.rater_group_parity.parity_by_rater_group",
    )
    analysis = "fairness.task_blocks.rate_block"
    report_tables = {
        "ratings": ReportTable(
            "mean ratings by rater group and subject group",
            GROUP_MEANS,
            Explanation(
                "Each rater group's mean rating, over all subjects and within each subject group.",
                "Compare the groups' 95% CIs within a row block: a rater group that rates one subject group higher "
                "than another group does judges it differently; the tests table gives p for each comparison.",
                f"mean_r = sum of the ratings of group r / their number; {RESAMPLING}",
                "Differential parity paper, Section 2 (raters as decision makers)",
            ),
            estimate="mean",
        ),
        "parity": ReportTable(
            "differential parity of rater groups and the AI",
            {
                "subject_attribute": "Subject attribute",
                "subject_group": "Group (A = 1)",
                "R0": "R0",
                "R1": "R1",
                "gap": "Gap m1 - m0",
                "ci": f"{CI_LABEL} (gap)",
                "DPT": "DPT",
                "df": "df",
                "pvalue": "p (one-sided)",
                "DPD": "DPD",
                "effect": "Effect",
                "n_subjects": "Subjects",
                "note": "Note",
            },
            Explanation(
                "Differential parity: does one decision maker (all raters, a rater group, or the AI) rate a subject "
                "group differently, relative to the other subjects, than another decision maker does? Each rater "
                "group's ratings act as one decision maker: per subject, the mean of its raters' ratings, on [0, 1] "
                "((rating - lowest) / (highest - lowest) of the scale) so that they compare with the AI's score in "
                "[0, 1] (its 0/1 label when the pool has no scores).",
                "DPT > 0 (p < .05) means R0 gives the group (A = 1) more than R1 does, relative to the other "
                "subjects; whether that favours them depends on the scale's favourable end (scale.favourable, by "
                "default lower = less risky), as the verdicts under the table say. The gap's CI resamples raters "
                "within their groups, subjects fixed.",
                "R(x) = mean of the group's raters' ratings of x; m_a = mean over subjects with A = a of R0(x) - "
                "R1(x); gap = m_1 - m_0; DPT = gap / its Welch standard error (one-sided p); DPD = gap / pooled SD",
                "Differential Parity paper, Definitions 2-4; fairness.rater_group_parity (platform's choice: ratings "
                "moved onto [0, 1] to meet the AI's score)",
            ),
            estimate="gap",
        ),
        "icc": ReportTable(
            "agreement among raters (ICC)",
            ICC_COLUMNS,
            Explanation(
                "How far raters agree in their ratings of the same subjects.",
                "ICC(A,1) near 1: one rater's rating predicts another's; ICC(A,k) is the reliability of the mean "
                "rating (only raters who rated every subject of the block count).",
                "ICC(A,1) and ICC(A,k) of a two-way random-effects model",
                "Shrout & Fleiss (1979); McGraw & Wong (1996); pingouin intraclass_corr",
            ),
            estimate="icc",
        ),
    }

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        if "model" in block:
            check_model(block, pool, base, add, "score" if block.get("show_model") else None, memo)
        scale = block["scale"]
        if scale["type"] == "likert":
            if "labels" not in scale:
                add(f"{base}.scale", "a likert scale needs 'labels'")
            elif scale.get("positive_from", 2) > len(scale["labels"]):
                add(f"{base}.scale.positive_from", f"must be <= the number of labels ({len(scale['labels'])})")
            return
        if "min" not in scale or "max" not in scale:
            add(f"{base}.scale", "a number scale needs 'min' and 'max'")
        elif scale["min"] >= scale["max"]:
            add(f"{base}.scale.max", f"must be > min ({scale['min']})")
        if "bts" in block:
            add(f"{base}.bts", "the BTS follow-up needs a categorical answer (a likert scale), not a number")

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("show_model", False)
        scale = block["scale"]
        if scale["type"] == "likert":
            scale.setdefault("positive_from", len(scale["labels"]) // 2 + 1)

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """A rating at or above ``positive_from`` (Likert scales only: a number has no categories)."""
        scale = block["scale"]
        if "bts" not in block or scale["type"] != "likert":
            return None
        return BtsPositive("rating", scale.get("positive_from", len(scale["labels"]) // 2 + 1))

    def form(self, page: dict, index, data=None) -> forms.Form:
        block = index.block(page)
        scale = block["scale"]
        prompt = bts_prompt(block, scale["labels"][scale["positive_from"] - 1]) if scale["type"] == "likert" else None
        return RateForm(data, page=page, question=block["question"], scale=scale, prediction_prompt=prompt)

    def context(self, page: dict, index) -> dict:
        block, pool = index.block(page), index.pool_of(page)
        ctx = {"cards": [index.card(pool["key"], page["item"], f"This {index.noun(pool)}")]}
        if block.get("show_model") and block.get("model"):
            score = index.model_output(pool["key"], page["item"], block["model"]).get("score")
            if score is not None:
                ctx["ai_score"] = round(score * 100, 1)
        return ctx

    def simulate(self, page, index, rater, rng) -> dict[str, str]:
        """Likert: round(c + scale_shift + N(0, noise)) clipped to 1..k, c the middle of the scale moved
        towards the AI's score when the block has a model (c = 1 + (k - 1) * score); number scales the
        same over [min, max] with scale_shift and noise in steps. BTS: the rater's P(rating >=
        positive_from)."""
        from simulation.raters import bts_prediction, share_below

        block = index.block(page)
        scale = block["scale"]
        score = 0.5
        if block.get("model"):
            score = index.model_output(block["pool"], page["item"], block["model"]).get("score", 0.5)
        if scale["type"] == "likert":
            k = len(scale["labels"])
            centre = 1 + (k - 1) * score + rater.scale_shift
            rating = int(np.clip(round(centre + rng.normal(0, rater.noise)), 1, k))
            data = {"rating": str(rating)}
            if "bts" in block:
                p = 1 - share_below(scale["positive_from"] - 0.5, centre, rater.noise)
                data["prediction"] = bts_prediction(p, rater, rng, own=rating >= scale["positive_from"])
            return data
        low, high = scale["min"], scale["max"]
        step = scale.get("step") or 1
        value = low + (high - low) * score + step * (rater.scale_shift + rng.normal(0, rater.noise))
        value = float(np.clip(round(value / step) * step, low, high))
        return {"rating": f"{value:g}"}
