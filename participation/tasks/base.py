"""The interface every task type implements, and what the task types share.

A task type serves one or more page kinds (a format 1 kind and its format 2 successor render
through the same class). The participant runtime (``participation.pages``) only ever calls these
methods, so adding a task type is one module plus its template.
"""

import numpy as np
from django import forms
from scipy.special import expit

from participation.services import AnswerInput
from participation.simulated_raters import SimulatedRater


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

    def screens_out(self, form: forms.Form) -> bool:
        """Whether this valid answer ends the study for the participant (screening)."""
        return False

    def simulate(self, page: dict, index, rater: SimulatedRater, rng: np.random.Generator) -> dict[str, str]:
        """The page's POST data as ``rater`` would send it."""
        raise NotImplementedError


def bts_prediction(p_positive: float, rater: SimulatedRater, rng: np.random.Generator) -> str:
    """A simulated BTS prediction: the rater's own probability of the positive answer (in percent),
    shifted by ``prediction_bias``, plus N(0, 5) points, as a whole percentage in [0, 100]."""
    value = 100 * p_positive + rater.prediction_bias + rng.normal(0, 5)
    return str(int(np.clip(round(value), 0, 100)))


def draw_binary(base_logit: float, rater: SimulatedRater, rng: np.random.Generator) -> tuple[int, float]:
    """A yes (1) / no (0) answer with logit P(yes) = base_logit + leniency + N(0, noise); returns
    the answer and the rater's probability without the noise (for the BTS prediction)."""
    p = float(expit(base_logit + rater.leniency))
    answer = int(rng.random() < expit(base_logit + rater.leniency + rng.normal(0, rater.noise)))
    return answer, p


def draw_sureness(p: float, rng: np.random.Generator) -> str:
    """A 5-point confidence that grows with how far the rater's probability is from 1/2."""
    return str(int(np.clip(round(1 + 8 * abs(p - 0.5) + rng.normal(0, 0.7)), 1, 5)))
