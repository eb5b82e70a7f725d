"""The study file's screening question; an answer outside ``eligible`` screens the participant out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms

from core.columns import Column
from tasks import questions
from tasks.base import AnswerInput, TaskType
from tasks.fields import option_field
from tasks.page_index import Page, PageIndex

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater


class ScreeningPageForm(forms.Form):
    def __init__(self, *args, screening: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.screening = screening
        self.fields["choice"] = option_field(screening["question"], screening)

    @property
    def eligible(self) -> bool:
        return self.cleaned_data["choice"] in self.screening["eligible"]

    def answers(self) -> list[AnswerInput]:
        choice = self.cleaned_data["choice"]
        return [AnswerInput(question=questions.SCREENING, measure="screening", number=int(self.eligible), text=choice)]


class Screening(TaskType):
    kinds = ("screening",)
    name = "screening"
    measures = {"screening": Column("0/1", "1 if the screening answer is eligible (text: the choice).")}

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        return ScreeningPageForm(data, screening=index.spec["screening"])

    def screens_out(self, form: forms.Form) -> bool:
        return not form.eligible  # type: ignore[attr-defined]  # ScreeningPageForm

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        return self.fill(page, index, rng)  # simulated participants are eligible

    def fill(self, page: Page, index: PageIndex, rng: np.random.Generator) -> dict[str, str]:
        """The first eligible answer: the screen is passed."""
        return {"choice": index.spec["screening"]["eligible"][0]}
