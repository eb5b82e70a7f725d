"""Instructions: text and a Start button; nothing is stored."""

from django import forms

from tasks.base import TaskType


class InstructionsForm(forms.Form):
    def answers(self) -> list:
        return []


class Instructions(TaskType):
    name = "instructions"
    kinds = ("instructions",)

    def template(self, page: dict) -> str:
        return "surveys/page_instructions.html"

    def form(self, page: dict, index, data=None) -> forms.Form:
        return InstructionsForm(data)

    def context(self, page: dict, index) -> dict:
        return {"instructions": index.block(page)["text"]}

    def simulate(self, page, index, rater, rng) -> dict[str, str]:
        return self.fill(page, index, rng)

    def fill(self, page, index, rng) -> dict[str, str]:
        """Start: the page has no field."""
        return {}
