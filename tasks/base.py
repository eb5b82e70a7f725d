"""The interface every task type implements, and what the task types share.

A task type serves one or more page kinds (a format 1 kind and its format 2 successor render
through the same class). The participant runtime (``participation.pages``) only ever calls these
methods, so adding a task type is one module plus its template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django import forms

if TYPE_CHECKING:  # the simulation models are loaded only by the simulator (simulation/)
    import numpy as np

    from simulation.raters import SimulatedRater


@dataclass(frozen=True)
class AnswerInput:
    """One answer a page stores (``surveys.models.Answer``): its question key (``tasks.questions``),
    measure (one of its task type's ``measures``), the set and subject it is about, and its value."""

    question: str
    measure: str
    set_key: str = ""
    subject_key: str = ""
    number: float | None = None
    text: str = ""


class TaskType:
    """One task type: its form, template, context, answers, export columns and simulation."""

    kinds: tuple[str, ...] = ()
    # measure -> meaning, for the codebook of the answers table
    columns: dict[str, str] = {}

    def template(self, page: dict) -> str:
        return f"surveys/page_{page['kind']}.html"

    def form(self, page: dict, index, data=None) -> forms.Form:
        raise NotImplementedError

    def context(self, page: dict, index) -> dict:
        """What the template needs beyond the form."""
        return {}

    def answers(self, page: dict, index, form: forms.Form) -> list[AnswerInput]:
        """The answers of a valid bound form."""
        return form.answers()

    def answer_bounds(self, page: dict, index) -> tuple[int, int]:
        """(fewest, most) answers a saved page stores, for the integrity check: one per required
        field of its form, up to one per field."""
        fields = self.form(page, index).fields.values()
        return sum(field.required for field in fields), len(fields)

    def screens_out(self, form: forms.Form) -> bool:
        """Whether this valid answer ends the study for the participant (screening)."""
        return False

    def simulate(self, page: dict, index, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """The page's POST data as ``rater`` would send it."""
        raise NotImplementedError
