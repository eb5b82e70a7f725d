"""Questionnaire blocks: questions about the participant (demographics, stakeholder role) of five
types: single choice, multiple choice, number (with range), short text and Likert item; each
required (default) or optional. Answers are stored with measure ``questionnaire``: a number for
number and Likert questions (Likert: the 1-based index), the text for choice and text questions,
and for multiple choice the chosen options as a JSON list in ``text``. An optional question left
blank stores nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from core import strict_json
from core.columns import Column
from tasks import questions
from tasks.base import AnswerInput, TaskType
from tasks.fields import option_choices, option_field, scale_field
from tasks.page_index import Block, Page, PageIndex
from tasks.rate import number_field

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater

DEFAULT_TEXT_LENGTH = 500


def _multiple_field(question: dict) -> forms.MultipleChoiceField:
    return forms.MultipleChoiceField(
        label=question["text"],
        choices=option_choices(question),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one option.")},
    )


def _text_field(question: dict) -> forms.CharField:
    limit = question.get("max_length", DEFAULT_TEXT_LENGTH)
    return forms.CharField(
        label=question["text"],
        max_length=limit,
        widget=forms.TextInput(attrs={"maxlength": limit}),
        error_messages={
            "required": _("Write an answer."),
            "max_length": gettext("Keep your answer to at most %(limit)d characters.") % {"limit": limit},
        },
    )


def question_field(question: dict) -> forms.Field:
    """The form field of one questionnaire question."""
    kind = question["type"]
    builders = {
        "single_choice": lambda q: option_field(q["text"], q),
        "multiple_choice": _multiple_field,
        "number": lambda q: number_field(
            q["text"], q.get("min"), q.get("max"), 1 if q.get("integer") else None, whole=q.get("integer", False)
        ),
        "text": _text_field,
        "likert": lambda q: scale_field(q["text"], q["labels"]),
    }
    field = builders[kind](question)
    field.required = question.get("required", True)
    if not field.required:
        field.label = gettext("%(question)s (optional)") % {"question": field.label}
    return field


class QuestionnaireForm(forms.Form):
    def __init__(self, *args, block_key: str, block: Block, **kwargs):
        super().__init__(*args, **kwargs)
        self.block_key = block_key
        self.questions = {q["key"]: q for q in block["questions"]}
        for key, question in self.questions.items():
            self.fields[key] = question_field(question)

    def clean(self):
        data = super().clean()
        for key, question in self.questions.items():
            chosen = data.get(key)
            if question["type"] != "multiple_choice" or not chosen:
                continue
            low, high = question.get("min_choices"), question.get("max_choices")
            if low and len(chosen) < low:
                self.add_error(key, gettext("Choose at least %(n)d options.") % {"n": low})
            elif high and len(chosen) > high:
                message = ngettext("Choose at most %(n)d option.", "Choose at most %(n)d options.", high)
                self.add_error(key, message % {"n": high})
        return data

    def answers(self) -> list[AnswerInput]:
        out = []
        for key, question in self.questions.items():
            value: Any = self.cleaned_data.get(key)
            if value in (None, "", []):
                continue
            common: dict[str, Any] = {
                "question": questions.questionnaire_question(self.block_key, key),
                "measure": "questionnaire",
                "set_key": self.block_key,
                "subject_key": key,
            }
            if question["type"] in ("number", "likert"):
                out.append(AnswerInput(number=float(value), **common))
            elif question["type"] == "multiple_choice":
                out.append(AnswerInput(text=strict_json.dumps(value), **common))
            else:
                out.append(AnswerInput(text=value.strip(), **common))
        return out


class Questionnaire(TaskType):
    kinds = ("questionnaire",)
    name = "questionnaire"
    measures = {
        "questionnaire": Column(
            "string",
            "A questionnaire answer: value for number and Likert questions (Likert: 1-based index), text for "
            "choice and text questions (multiple choice: a JSON list).",
        ),
    }

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        return QuestionnaireForm(data, block_key=page["block"], block=index.block(page))

    def context(self, page: Page, index: PageIndex) -> dict:
        block = index.block(page)
        return {"title": block.get("title", gettext("About you")), "intro": block.get("intro", "")}

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict:
        """The rater's ``group`` answers where it has them (multiple choice: "a; b"), else :meth:`fill`'s."""
        data = self.fill(page, index, rng)
        for question in index.block(page)["questions"]:
            given = rater.group.get(question["key"])
            if given is not None and (given or question["type"] != "multiple_choice"):
                data[question["key"]] = given.split("; ") if question["type"] == "multiple_choice" else given
        return data

    def fill(self, page: Page, index: PageIndex, rng: np.random.Generator) -> dict[str, str | list[str]]:
        """Every question but an optional text: the first option (multiple choice: the fewest it takes), the
        middle of the range or scale, and a short text."""
        data: dict[str, str | list[str]] = {}
        for question in index.block(page)["questions"]:
            key, kind = question["key"], question["type"]
            if kind == "multiple_choice":
                data[key] = question["options"][: question.get("min_choices", 1)]
            elif kind == "single_choice":
                data[key] = question["options"][0]
            elif kind == "number":
                low, high = question.get("min", 0), question.get("max", 100)
                data[key] = str(int((low + high) // 2) if question.get("integer") else (low + high) / 2)
            elif kind == "likert":
                data[key] = str((len(question["labels"]) + 1) // 2)
            elif question.get("required", True):
                data[key] = "No answer"
        return data
