"""Agree: "The AI predicts ... Do you agree?" (``agree`` blocks: one subject per page with a profile
card, optional confidence and optional BTS prediction of the share answering "Yes, I agree"; with
``one_page`` every subject of the block on one page, one fieldset each; ``item_keys`` give items keys (a
converted format 1 file's prompt keys, its ``disagreement`` page becoming a one-page block) that their
answers' ``text`` and the disagreements table's ``prompt`` carry)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from django import forms
from django.utils.text import capfirst
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from core.columns import Column
from core.report_texts import (
    CI_LABEL,
    ERROR_RATE_COLUMNS,
    FEEDBACK,
    GROUP_MEANS,
    IN_GROUP,
    IN_GROUP_RATES,
    MAJORITY_CI,
    MAJORITY_PROCEDURES,
    RESAMPLING,
    YES_NO_MEANS,
    Explanation,
    ReportTable,
    TableView,
)
from tasks import questions
from tasks.base import AnswerInput, BlockTask, BtsPositive, BuilderInput, FoundAnswers
from tasks.fields import CONFIDENCE_LABELS, binary_field, prediction_field, scale_field
from tasks.nouns import question_text
from tasks.page_index import Block, Card, Page, PageIndex
from tasks.schema import BINARY_NAMES, BTS, KEY, MODEL, PAGE_KEY, QUESTION, check_model, duplicates, once
from tasks.yields import Yield

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

DEFAULT_AGREE_QUESTION = gettext_noop("The AI predicts that this {subject_noun} {prediction}. Do you agree?")
DEFAULT_LABEL_NAMES = {"1": gettext_noop("is high risk"), "0": gettext_noop("is low risk")}

AGREE_CHOICES = ((1, _("Yes, I agree")), (0, _("No, I disagree")))
ANSWER_YES_NO = gettext_noop("Answer yes or no.")


class BinaryTaskForm(forms.Form):
    """A format 2 yes/no task on one item: the answer (measure ``answer_measure``, 1/0), an optional
    5-point follow-up (``sure_measure``) and an optional BTS prediction of the share answering yes;
    ``text`` (the item's key, or blank) is stored with each answer; ``block`` is the page's block (its
    answers' keys: ``tasks.questions.answer_question``)."""

    def __init__(
        self,
        *args,
        page: Page,
        question: str,
        choices,
        required_message: str,
        answer_measure: str,
        sure_label: str | None,
        sure_measure: str,
        prediction_prompt: str | None,
        block: Block,
        text: str = "",
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.page, self.answer_measure, self.sure_measure = page, answer_measure, sure_measure
        self.text, self.block = text, block
        self.fields["answer"] = binary_field(question, choices, required_message)
        if sure_label:
            self.fields["sure"] = scale_field(sure_label, CONFIDENCE_LABELS)
        if prediction_prompt:
            self.fields["prediction"] = prediction_field(prediction_prompt)

    def answers(self) -> list[AnswerInput]:
        block, item = self.block, self.page["item"]
        measures = {"answer": self.answer_measure, "sure": self.sure_measure, "prediction": "prediction"}
        return [
            AnswerInput(
                question=questions.answer_question(block, item, measures[name]),
                measure=measures[name],
                set_key=questions.answer_set(block, item),
                subject_key=item,
                number=self.cleaned_data[name],
                text=self.text,
            )
            for name in ("answer", "sure", "prediction")
            if name in self.fields
        ]


class OnePageForm(forms.Form):
    """Every item of a ``one_page`` block on one page: the items' forms (``item_forms``, each with its
    prefix ``item<n>``) merged, their fields under the prefixed names; ``groups`` are the items in page
    order, each its profile card and its bound fields by unprefixed name (``answer``, ``sure``, ...)."""

    def __init__(self, *args, item_forms: list[BinaryTaskForm], cards: list[Card], **kwargs):
        super().__init__(*args, **kwargs)
        self.item_forms, self.cards = item_forms, cards
        for item_form in item_forms:
            for name, field in item_form.fields.items():
                self.fields[item_form.add_prefix(name)] = field

    @property
    def groups(self) -> list[dict]:
        return [
            {"card": card, **{name: self[item_form.add_prefix(name)] for name in item_form.fields}}
            for item_form, card in zip(self.item_forms, self.cards, strict=True)
        ]

    def answers(self) -> list[AnswerInput]:
        out: list[AnswerInput] = []
        for item_form in self.item_forms:
            item_form.cleaned_data = {name: self.cleaned_data[item_form.add_prefix(name)] for name in item_form.fields}
            out += item_form.answers()
        return out


def item_card(page: Page, index: PageIndex) -> Card:
    """The profile card of a format 2 page's item, titled "This <noun>" in the participant's language."""
    pool = index.pool_of(page)
    return index.card(pool["key"], page["item"], gettext("This %(noun)s") % {"noun": index.noun(pool)})


def bts_prompt(block: Block, positive: str = "") -> str | None:
    """The block's BTS prompt (``{positive}`` replaced by the positive answer), None without BTS."""
    return block["bts"]["prompt"].replace("{positive}", positive) if "bts" in block else None


def agree_question(page: Page, index: PageIndex) -> str:
    block = index.block(page)
    label = index.model_output(block["pool"], page["item"], block["model"])["label"]
    return question_text(block["question"], index.pool_of(page), prediction=block["label_names"][str(label)])


def error_rates_view(frame) -> TableView:
    """An error-rates table (``fairness.error_rates``) as reports show it: the accuracy's CI; FPR's and
    FNR's stay in the CSV."""
    return TableView(frame.rename(columns={"accuracy_low": "ci_low", "accuracy_high": "ci_high"}))


class Agree(BlockTask):
    kinds = ("agree",)
    name = "agree"
    format1_part = "disagreement"
    measures = {
        "agree": Column("0/1", "1 when the participant agrees with the AI's prediction, else 0."),
        "confidence": Column("integer", "How confident the participant is (1 = not at all).", "1..5", bounds=(1, 5)),
        "prediction": Column(
            "number", "BTS prediction: percent of others expected to agree.", "0..100", bounds=(0, 100)
        ),
    }
    options = {
        **MODEL,
        "label_names": BINARY_NAMES,
        "confidence": {"type": "boolean"},
        "one_page": {"type": "boolean"},
        "item_keys": {"type": "object", "propertyNames": KEY, "additionalProperties": KEY},
        **BTS,
        **QUESTION,
        "page_key": PAGE_KEY,
    }
    needs = ("model",)
    export_table = "disagreements"
    parity_table = "disagreements"
    builder_template = "disagreement"
    builder_key = "agree"
    builder_instructions = gettext_noop(
        "You will read short descriptions of people, one at a time, together with the prediction of an AI "
        "model about each of them.\n\n"
        "For each person, say whether you agree with the AI's prediction and how confident you are. Then "
        "estimate what percentage of the other participants agreed with the AI. There are no right or wrong "
        "answers: we are interested in your own judgement."
    )
    builder_seconds = 25
    builder_needs_model = True
    builder_description = "Disagreement: does the participant agree with the AI's prediction? (yes/no, confidence, BTS)"
    default_bts_prompt = gettext_noop("What percentage of other participants do you think agreed with the AI?")
    yields = {Yield.DISAGREEMENT: "agree", Yield.ALPHA: "agree", Yield.PARITY: "agree"}
    estimators = (
        "fairness.disagreement.disagreement_notions",
        "fairness.rater_groups.rater_group_difference_tests",
        "fairness.calibration.calibrate_from_disagreement",
    )
    analysis = "fairness.task_blocks.agree_block"
    report_tables = {
        "in_group": IN_GROUP,
        "in_group_rates": IN_GROUP_RATES,
        "disagreement_rate": ReportTable(
            "disagreement rate by rater group",
            {**GROUP_MEANS, "mean": "DR"},
            Explanation(
                "How often participants disagree with the AI's label, over all answers and per rater group.",
                "A higher DR means the group rejects the AI's predictions more often; compare the groups' 95% CIs, "
                "and read the tests table for the difference between groups.",
                f"DR_r = P(s = 1 | rater in r), s = 1 - agree; {RESAMPLING}",
                f"{FEEDBACK}, the disagreement rate",
            ),
            estimate="mean",
            figure=("rater_group", "mean"),
            headline="mean",
            procedures=YES_NO_MEANS,
        ),
        "notions": ReportTable(
            "disagreement-derived notions by rater group",
            {
                "subject_attribute": "Subject attribute",
                "subject_groups": "Subject groups",
                "rater_group": "Rater group",
                "statistic": "Notion",
                "value": "Value",
                "lower": "Lower",
                "upper": "Upper",
                "ci": CI_LABEL,
                "pvalue": "p (no gap)",
                "n_raters": "Raters",
                "n_answers": "Answers",
            },
            Explanation(
                "Group-fairness gaps computed with the participants' labels (their yes/no disagreement with the AI) "
                "in place of true labels, per subject-group column, for all participants and per rater group.",
                "Each value is the largest gap between subject groups (0 = equal treatment), over all compared "
                "subject groups ('all') and between the two largest alone ('a vs b'), which tiny groups cannot "
                "dominate; when the notion is only bounded, the value is the midpoint of lower and upper. The "
                "all-participants interval covers the gap also when it is 0 (simultaneous intervals of every "
                "pair of groups' signed difference, raters resampled, projected on the gap; coverage measured by "
                "simulation), and 'p (no gap)' tests whether the data show a gap at all (the subjects' groups "
                "permuted). The signed differences between each pair of groups, with their intervals, are in "
                "the notion_differences CSV.",
                "f = max_k (max_m f_{m,k} - min_m f_{m,k}), with DR_{m,k} = P(s = 1 | yhat = k, m)",
                f"{FEEDBACK}, Eq. 0-5",
            ),
            headline="value",
            procedures=tuple(f"{n} gap, {c}" for n in ("CA", "AE", "EO") for c in ("no gap", "a gap"))
            + ("no-gap permutation test",),
        ),
        "notion_differences": ReportTable(
            "signed differences between subject groups behind each notion",
            {
                "subject_attribute": "Subject attribute",
                "subject_groups": "Subject groups",
                "notion": "Notion",
                "label": "Model label",
                "group": "Group",
                "other_group": "Other group",
                "difference": "Difference",
                "ci": CI_LABEL,
            },
            Explanation(
                "For every notion, label and pair of subject groups, f(group) - f(other group), all participants: "
                "the gaps above are the largest of these in absolute value.",
                "An interval that excludes 0 shows which pair differs and in which direction. The intervals hold "
                "jointly (simultaneous, at the stated level, raters resampled), so reading all of them at once "
                "is safe.",
                "d = f_{m,k} - f_{m',k}; d +- c se, c the sup-t bootstrap quantile over all pairs",
                f"{FEEDBACK}, Eq. 0-5",
            ),
            estimate="difference",
            procedures=tuple(f"{n} signed differences, {c}" for n in ("CA", "AE", "EO") for c in ("no gap", "a gap")),
        ),
        "agree_error_rates": ReportTable(
            "error rates against the outcome: participants, their majority and the model",
            ERROR_RATE_COLUMNS,
            Explanation(
                "How often the participants' predictions (the AI's label when they agree, the other label when they "
                "disagree), the majority of each subject's participants and the model are right about the true "
                "outcome (the pool's outcome_column), over all subjects and per subject group, for all participants "
                "and per rater group; only for pools with an outcome column.",
                "Compare the participants and their majority with the model row by row: a lower FPR wrongly flags "
                "fewer subjects who had no event, a lower FNR misses fewer who had one; unequal FPR or FNR across "
                "subject groups is the unequal treatment Dressel & Farid report for COMPAS and for people. n counts "
                "answers for participants, subjects otherwise; FPR and FNR CIs are in the CSV, the model has none.",
                "accuracy = P(yhat = y), FPR = P(yhat = 1 | y = 0), FNR = P(yhat = 0 | y = 1); participants pooled "
                "over answers; majority per subject, a tie counted as 0 (Dressel & Farid, the default) or as the "
                f"AI's label (majority_tie='agree'); {MAJORITY_CI}",
                "Dressel & Farid (2018), Table 1",
            ),
            estimate="accuracy",
            procedures=MAJORITY_PROCEDURES,
        ),
    }

    def check_block(self, block: dict, pool: dict, base: str, add, memo: dict) -> None:
        """The model labels every subject; ``item_keys`` name subjects of the pool, each key once."""
        check_model(block, pool, base, add, "label", memo)
        item_keys = block.get("item_keys", {})
        ids = once(memo, (pool["key"], "ids"), lambda: {s["id"] for s in pool["subjects"]})
        for item in item_keys:
            if item not in ids:
                add(f"{base}.item_keys.{item}", f"subject {item!r} is not in pool {pool['key']!r}")
        for dup in sorted(duplicates(list(item_keys.values()))):
            add(f"{base}.item_keys", f"key {dup!r} is given to two items")

    def apply_defaults(self, block: dict, pool: dict) -> None:
        super().apply_defaults(block, pool)
        block.setdefault("question", gettext(DEFAULT_AGREE_QUESTION))
        block.setdefault("label_names", {k: gettext(v) for k, v in DEFAULT_LABEL_NAMES.items()})
        block.setdefault("confidence", False)
        block.setdefault("one_page", False)
        block.setdefault("item_keys", {})

    def one_page(self, block: dict) -> bool:
        return bool(block.get("one_page"))

    def present(self, name: str, frame) -> TableView:
        """The ``agree_error_rates`` table with the accuracy's CI (FPR's and FNR's stay in the CSV)."""
        if name != "agree_error_rates":
            return super().present(name, frame)
        return error_rates_view(frame)

    def export_rows(self, pages: list[dict], found: FoundAnswers, content, seconds) -> list[dict]:
        """The disagreements table: one row per answered item, ``prompt`` the item's key (``item_keys``)
        or else ``<block>/<item>`` (the item's page key when each item has its page), ``demo_*`` the
        subject's group columns, ``model_label`` / ``model_score`` the block's model's output."""
        rows = []
        for page in pages:
            block = content.blocks[page["block"]]
            for item in page.get("items", [page.get("item")]):
                agree = found.number(page["key"], "agree", item)
                if math.isnan(agree):
                    continue
                subject = content.subject(block["pool"], item)
                output = content.model_output(block["pool"], item, block["model"])
                label = int(output["label"])
                rows.append(
                    {
                        "prompt": block["item_keys"].get(item, f"{block['key']}/{item}"),
                        "subject": item,
                        "model_label": label,
                        "model_score": output.get("score", math.nan),
                        "agree": int(agree),
                        "disagreement": 1 - int(agree),
                        "participant_label": label if agree == 1 else 1 - label,
                        **{f"demo_{k}": v for k, v in subject["groups"].items()},
                    }
                )
        return rows

    def builder_block(self, source: BuilderInput) -> dict:
        """Every subject with the confidence question and the BTS follow-up."""
        return {"task": self.name, "model": source.model, "confidence": True, "bts": {}}

    def bts_positive(self, block: dict) -> BtsPositive | None:
        """Agreeing with the AI (1)."""
        return BtsPositive("agree", 1, 1) if "bts" in block else None

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        block = index.block(page)
        if "items" not in page:
            return self.item_form(block, page, index, data)
        pool = index.pool_of(page)
        noun, n = capfirst(index.noun(pool)), len(page["items"])
        return OnePageForm(
            data,
            item_forms=self.item_forms(block, page, index),
            cards=[
                index.card(
                    pool["key"],
                    item,
                    gettext("%(noun)s %(number)d of %(total)d") % {"noun": noun, "number": i, "total": n},
                )
                for i, item in enumerate(page["items"], start=1)
            ],
        )

    def item_forms(self, block: Block, page: Page, index: PageIndex) -> list[BinaryTaskForm]:
        """The unbound forms of a one-page block's items, in page order (prefixes ``item0``, ``item1``, ...)."""
        return [
            self.item_form(block, {**page, "item": item}, index, prefix=f"item{i}")
            for i, item in enumerate(page["items"])
        ]

    def item_form(
        self, block: Block, page: Page, index: PageIndex, data=None, prefix: str | None = None
    ) -> BinaryTaskForm:
        """The form of one item (``page["item"]``) of a format 2 block; its answers carry the item's key."""
        return BinaryTaskForm(
            data,
            page=page,
            question=agree_question(page, index),
            choices=AGREE_CHOICES,
            required_message=gettext(ANSWER_YES_NO),
            answer_measure="agree",
            sure_label=gettext("How confident are you?") if block["confidence"] else None,
            sure_measure="confidence",
            prediction_prompt=bts_prompt(block),
            text=block["item_keys"].get(page["item"], ""),
            block=block,
            prefix=prefix,
        )

    def context(self, page: Page, index: PageIndex) -> dict:
        """The item's profile card (a one-page block's cards are in its form's ``groups``)."""
        if "items" in page:
            return {"cards": []}
        return {"cards": [item_card(page, index)]}

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """Agree with logit P = agree_logit(the AI's score) + leniency + N(0, noise)
        (``simulation.raters``); confidence from how sure the rater is; the BTS prediction
        from the rater's own agreement probability and answer; a one-page block's items in page order."""
        from simulation.raters import agree_logit, draw_binary

        block = index.block(page)
        forms_ = [self.item_form(block, page, index)] if "items" not in page else self.item_forms(block, page, index)
        data: dict[str, str] = {}
        for form in forms_:  # on one page, item by item as on their own pages
            score = index.model_output(block["pool"], form.page["item"], block["model"]).get("score")
            answer, p = draw_binary(agree_logit(score), rater, rng)
            answers = binary_extras(form, {"answer": str(answer)}, p, rater, rng)
            data |= {form.add_prefix(name): value for name, value in answers.items()}
        return data


def binary_extras(form: forms.Form, data: dict[str, str], p: float, rater, rng) -> dict:
    """Add the follow-ups a binary task form asks for to simulated POST data."""
    from simulation.raters import bts_prediction, draw_sureness

    if "sure" in form.fields:
        data["sure"] = draw_sureness(p, rng)
    if "prediction" in form.fields:
        data["prediction"] = bts_prediction(p, rater, rng, own=data["answer"] == "1")
    return data
