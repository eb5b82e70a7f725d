"""Attention checks: one question with a correct option (format 1 ``attention_checks.items``,
format 2 ``attention`` blocks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django import forms

from core.columns import Column
from tasks import questions
from tasks.base import AnswerInput, TaskType
from tasks.fields import option_field
from tasks.page_index import Page, PageIndex

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater


class AttentionPageForm(forms.Form):
    def __init__(self, *args, check: dict, set_key: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.check, self.set_key = check, set_key
        self.fields["choice"] = option_field(check["question"], check)

    def answers(self) -> list[AnswerInput]:
        choice = self.cleaned_data["choice"]
        return [
            AnswerInput(
                question=questions.attention_question(self.check["key"]),
                measure="attention",
                number=1 if choice == self.check["correct"] else 0,
                text=choice,
                set_key=self.set_key,
            )
        ]


def attention_check(page: Page, index: PageIndex) -> dict:
    """The check shown on an attention page: question, options, correct, and the key of its answer
    (``attention/<key>``): the block's, or the format 1 check a converted block was."""
    block = index.block(page)
    return {**block, "key": block.get("page_key", {}).get("key", block["key"])}


def attention_count(spec: dict) -> int:
    """How many attention checks a study file has (format 1 items or format 2 attention blocks)."""
    if spec.get("format", 1) == 1:
        return len(spec.get("attention_checks", {}).get("items", []))
    return sum(block["type"] == "attention" for block in spec["blocks"])


class Attention(TaskType):
    kinds = ("attention",)
    name = "attention"
    format1_part = "attention"
    measures = {"attention": Column("0/1", "1 if the attention check was answered correctly (text: the choice).")}

    def template(self, page: Mapping[str, Any]) -> str:
        return "surveys/page_attention.html"

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        set_key = questions.answer_set(index.block(page))
        return AttentionPageForm(data, check=attention_check(page, index), set_key=set_key)

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """Correct with probability ``honesty``, else a random option."""
        if rng.random() < rater.honesty:
            return self.fill(page, index, rng)
        return {"choice": str(rng.choice(attention_check(page, index)["options"]))}

    def fill(self, page: Page, index: PageIndex, rng: np.random.Generator) -> dict[str, str]:
        """The correct option."""
        return {"choice": attention_check(page, index)["correct"]}
