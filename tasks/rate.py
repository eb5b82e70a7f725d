"""Rate: a number or a Likert rating of one subject, optionally with the AI's score shown and, for
Likert scales, a BTS prediction of the share rating at or above ``positive_from``."""

from decimal import Decimal

import numpy as np
from django import forms
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.columns import Column
from core.report_texts import (
    CI_LABEL,
    ERROR_RATE_COLUMNS,
    GROUP_MEANS,
    ICC_COLUMNS,
    ICC_PROCEDURES,
    IN_GROUP,
    IN_GROUP_RATES,
    MAJORITY_CI,
    MAJORITY_PROCEDURES,
    RATING_MEANS,
    RESAMPLING,
    Explanation,
    ReportTable,
    TableView,
)
from tasks import questions
from tasks.agree import bts_prompt, error_rates_view, item_card
from tasks.base import AnswerInput, BlockTask, BtsPositive, BuilderInput
from tasks.fields import prediction_field, scale_field
from tasks.schema import BTS, LABELS, MODEL, QUESTION, check_model
from tasks.yields import Yield


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# (between, at least, at most, any) for a whole number (True) and any number (False)
_NUMBER_MESSAGES = {
    True: (
        _("Enter a whole number between %(low)s and %(high)s."),
        _("Enter a whole number of at least %(low)s."),
        _("Enter a whole number of at most %(high)s."),
        _("Enter a whole number."),
    ),
    False: (
        _("Enter a number between %(low)s and %(high)s."),
        _("Enter a number of at least %(low)s."),
        _("Enter a number of at most %(high)s."),
        _("Enter a number."),
    ),
}


def number_field(
    label: str, low: float | None, high: float | None, step: float | None, *, whole: bool | None = None
) -> forms.Field:
    """A number in [low, high] (either bound may be None). ``whole`` (default: the step and the bounds
    are whole numbers) asks for a whole number. Every error names the allowed range."""
    if whole is None:
        whole = all(float(v).is_integer() for v in (low, high, step or 1) if v is not None)
    bounds = {"low": _shown(low) if low is not None else "", "high": _shown(high) if high is not None else ""}
    if low is not None and high is not None:
        message = _NUMBER_MESSAGES[whole][0] % bounds
    elif low is not None:
        message = _NUMBER_MESSAGES[whole][1] % bounds
    elif high is not None:
        message = _NUMBER_MESSAGES[whole][2] % bounds
    else:
        message = str(_NUMBER_MESSAGES[whole][3])
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


# the builder template's question and scale, written in the active language
RATING_QUESTION = gettext_noop("How risky do you think this person is?")
RATING_LABELS = (
    gettext_noop("Not at all risky"),
    gettext_noop("Slightly risky"),
    gettext_noop("Somewhat risky"),
    gettext_noop("Moderately risky"),
    gettext_noop("Quite risky"),
    gettext_noop("Very risky"),
    gettext_noop("Extremely risky"),
)
RATING_POSITIVE_FROM = 5  # "Quite risky" and above count as the positive answer for BTS
PARITY_ALPHA = 0.05  # the level of parity_by_rater_group's verdicts


class Rate(BlockTask):
    kinds = ("rate",)
    name = "rate"
    measures = {
        "rating": Column("number", "The rating: the Likert answer's 1-based index, or the number given.", "scale"),
        "prediction": Column(
            "number", "BTS prediction: percent of others expected to rate positively.", "0..100", bounds=(0, 100)
        ),
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
    builder_key = "ratings"
    builder_instructions = gettext_noop(
        "You will read short descriptions of people, one at a time.\n\n"
        "For each person, rate how risky you think they are, from 1 (not at all risky) to 7 (extremely "
        "risky). There are no right or wrong answers: we are interested in your own judgement."
    )
    builder_seconds = 15
    builder_description = "Rating: how risky is this person? (7-point scale)"
    default_bts_prompt = gettext_noop(
        "What percentage of other participants do you think chose '{positive}' or higher?"
    )
    yields = {Yield.PARITY: "rating"}
    estimators = (
        "fairness.rater_groups.rater_group_difference_tests",
        "analysis.agreement.rating_icc",
        "fairness.rater_group_parity.parity_by_rater_group",
    )
    analysis = "fairness.task_blocks.rate_block"
    report_tables = {
        "in_group": IN_GROUP,
        "in_group_rates": IN_GROUP_RATES,
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
            figure=("subject_group", "mean"),
            procedures=RATING_MEANS,
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
                "dpt_pvalue": "p (DPT, one-sided)",
                "pvalue": "p (rater-level)",
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
                "A positive gap with a rater-level p below .05 means R0 gives the group (A = 1) more than R1 does, "
                "relative to the other subjects (the verdict rule is stated under the table: a permutation of raters "
                "between rater groups, a rater jackknife t-test against the AI; DPT's one-sided p is the paper's "
                "rule for two fixed decision sets, shown for reference); whether that favours them depends on the "
                "scale's favourable end (scale.favourable, by default lower = less risky), as the verdicts under "
                "the table say. The gap's CI resamples raters within their groups, subjects fixed.",
                "R(x) = mean of the group's raters' ratings of x; m_a = mean over subjects with A = a of R0(x) - "
                "R1(x); gap = m_1 - m_0; DPT = gap / its Welch standard error (one-sided p); DPD = gap / pooled SD",
                "Differential Parity paper, Definitions 2-4; fairness.rater_group_parity (platform's choice: ratings "
                "moved onto [0, 1] to meet the AI's score)",
            ),
            estimate="gap",
            headline="gap",
            procedures=tuple(
                f"parity {measured}, rater group against {other}"
                for measured in ("gap", "test")
                for other in ("rater group", "the AI")
            ),
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
            procedures=ICC_PROCEDURES,
        ),
        "rate_error_rates": ReportTable(
            "error rates against the outcome: raters, their majority and the model",
            ERROR_RATE_COLUMNS,
            Explanation(
                "How often the raters' ratings, read as predictions of the pool's outcome (outcome_column), the "
                "majority of each subject's raters and the block's model are right, over all subjects and per "
                "subject group, for all raters and per rater group; only for pools with an outcome column.",
                "A rating predicts the event (outcome 1) when it lies on the scale's unfavourable side: with "
                "scale.favourable 'lower' (the default) a rating at or above the threshold, with 'higher' one below "
                "it; the threshold is scale.positive_from on a Likert scale (default: the upper half) and the "
                "midpoint (min + max) / 2 on a number scale. Lower FPR: fewer subjects without the event flagged; "
                "lower FNR: fewer with it missed. FPR and FNR CIs are in the CSV, the model has none.",
                "accuracy = P(yhat = y), FPR = P(yhat = 1 | y = 0), FNR = P(yhat = 0 | y = 1); raters pooled over "
                "answers; majority per subject, a tie counted as 0 (as for agree blocks) or as the AI's label "
                f"(majority_tie='agree'); {MAJORITY_CI}",
                "Dressel & Farid (2018), Table 1 (the agree blocks' table, for ratings)",
            ),
            estimate="accuracy",
            procedures=MAJORITY_PROCEDURES,
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

    def present(self, name: str, frame) -> TableView:
        """The ``parity`` table with the gap's CI (DPD's CI stays in the CSV) and, as notes, the verdicts
        significant at :data:`PARITY_ALPHA`; ``rate_error_rates`` as the agree blocks' error rates."""
        if name == "rate_error_rates":
            return error_rates_view(frame)
        if name != "parity":
            return super().present(name, frame)
        from fairness.rater_group_parity import RULE_JACKKNIFE, RULE_PERMUTATION  # the report job only

        rule = (
            f"Verdict rule between rater groups: {RULE_PERMUTATION}; a rater group or all raters against "
            f"the AI: {RULE_JACKKNIFE} (alpha = {PARITY_ALPHA:g}). DPT's one-sided p is the paper's rule "
            "for two fixed decision sets, shown for reference."
        )
        notes = (rule,) + tuple(
            f"{r.subject_attribute} = {r.subject_group}: {r.verdict}"
            for r in frame.itertuples(index=False)
            if r.pvalue < PARITY_ALPHA
        )
        return TableView(frame.rename(columns={"gap_ci_low": "ci_low", "gap_ci_high": "ci_high"}), notes=notes)

    def builder_block(self, source: BuilderInput) -> dict:
        """A 7-point Likert risk rating (points 5-7 count as "risky" if BTS is turned on); the model's output
        kept, not shown, so that raters can be compared with the AI."""
        block: dict = {
            "task": self.name,
            "question": gettext(RATING_QUESTION),
            "scale": {
                "type": "likert",
                "labels": [gettext(label) for label in RATING_LABELS],
                "positive_from": RATING_POSITIVE_FROM,
            },
        }
        if source.subjects[0]["models"]:
            block.update(model=source.model, show_model=False)
        return block

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
        ctx = {"cards": [item_card(page, index)]}
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
