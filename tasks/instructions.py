"""Instructions: text and a Start button; nothing is stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django import forms

from tasks.base import TaskType
from tasks.page_index import Page, PageIndex

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater


class InstructionsForm(forms.Form):
    def answers(self) -> list:
        return []


class Instructions(TaskType):
    name = "instructions"
    kinds = ("instructions",)

    def template(self, page: Mapping[str, Any]) -> str:
        return "surveys/page_instructions.html"

    def form(self, page: Page, index: PageIndex, data=None) -> forms.Form:
        return InstructionsForm(data)

    def context(self, page: Page, index: PageIndex) -> dict:
        return {"instructions": index.block(page)["text"]}

    def simulate(self, page: Page, index: PageIndex, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        return self.fill(page, index, rng)

    def fill(self, page: Page, index: PageIndex, rng: np.random.Generator) -> dict[str, str]:
        """Start: the page has no field."""
        return {}
