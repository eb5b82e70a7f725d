"""Simulated raters for format 2 studies: a generative model in which rater groups really differ.

A rater belongs to a group (their questionnaire answers) and carries the group's effects plus their own
response style. Rater i in group g (``draw_rater``):
  leniency_i    = leniency_g + N(0, STYLE_SD^2)       logit shift of agreeing with the AI / saying "comparable"
  scale_shift_i = scale_shift_g + N(0, STYLE_SD^2)    shift of ratings, in scale units
and the group's ``noise``, ``alpha`` (effort weight, pair_distance), ``honesty`` and ``prediction_bias``.
The task types (``tasks``, ``TaskType.simulate``) turn a rater into a page's answers with
the draws below, e ~ N(0, noise^2) per answer:
  yes/no (``draw_binary``): P(yes) = expit(base + leniency_i + e); agree: base = ``agree_logit`` =
                   AGREE_BASE + AGREE_CONFIDENCE * c, c = |2 score - 1| the AI's confidence (1/2 without a
                   score); pair_comparable: base = COMPARABLE_SLOPE * (1/2 - d), d the pair's feature distance.
  rate, pair_distance: the scale position of the subject's risk (or the pair's distances) + scale_shift_i + e.
  confidence / strength (``draw_sureness``): grows with |P(yes) - 1/2|.
  BTS prediction (``bts_prediction``): 100 P(positive) +/- PROJECTION points towards the rater's own
                   answer (false consensus) + prediction_bias + N(0, PREDICTION_SD^2), clipped to 0..100.
  attention: correct with probability ``honesty``; questionnaire: the rater's group answers.
Group effects come from a table ``{question: {option: {field: value}}}`` (``GroupEffects``, the
``--group-effect`` option); options not in the table take the defaults of :class:`SimulatedRater`.
``default_group_effects`` plants a difference on the study's first single-choice question: its first
option's raters are ``DEFAULT_EFFECT`` more lenient (logit) and rate ``DEFAULT_EFFECT`` scale units lower
than the other options' raters.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from fairness.effort import trend_slope

# A neutral rater agrees with an AI of average confidence (c = 1/2) with probability expit(1.0) = 0.73
# (lay people agreed with COMPAS on about two thirds of defendants in Dressel & Farid's study).
AGREE_BASE = 0.5
AGREE_CONFIDENCE = 1.0
PROJECTION = 10.0
PREDICTION_SD = 5.0
STYLE_SD = 0.3
DEFAULT_EFFECT = 1.0
EFFECT_FIELDS = ("leniency", "scale_shift", "noise", "alpha", "honesty", "prediction_bias")

GroupEffects = dict[str, dict[str, dict[str, float]]]


@dataclass(frozen=True)
class SimulatedRater:
    """``group``: the questionnaire answers the rater gives (question key -> answer);
    ``leniency``: logit shift of agreeing with the AI and of answering "comparable";
    ``scale_shift``: shift of ratings in scale units; ``noise``: standard deviation of the rater's
    answer noise (logit or scale units); ``alpha``: effort weight of pair distances (0 = only the
    aggregate, 1 = only the trajectory); ``honesty``: probability of answering an attention check
    correctly; ``prediction_bias``: shift, in percentage points, of the rater's BTS predictions."""

    group: dict[str, str] = field(default_factory=dict)
    leniency: float = 0.0
    scale_shift: float = 0.0
    noise: float = 0.5
    alpha: float = 0.65
    honesty: float = 1.0
    prediction_bias: float = 0.0


def parse_group_effect(text: str) -> tuple[str, str, dict[str, float]]:
    """``QUESTION=OPTION:FIELD=VALUE[,FIELD=VALUE...]`` (the ``--group-effect`` option) -> its parts."""
    head, sep, body = text.partition(":")
    question, eq, option = head.partition("=")
    if not (sep and eq and question and option and body):
        raise ValueError(f"{text!r}: expected QUESTION=OPTION:FIELD=VALUE[,FIELD=VALUE...]")
    effects = {}
    for part in body.split(","):
        name, eq, value = part.partition("=")
        if name not in EFFECT_FIELDS or not eq:
            raise ValueError(f"{text!r}: {name!r} is not one of {', '.join(EFFECT_FIELDS)} (FIELD=VALUE)")
        try:
            effects[name] = float(value)
        except ValueError:
            raise ValueError(f"{text!r}: {value!r} is not a number") from None
    return question.strip(), option.strip(), effects


def questionnaire_questions(spec: dict) -> list[dict]:
    return [q for block in spec.get("blocks", []) if block["type"] == "questionnaire" for q in block["questions"]]


def default_group_effects(spec: dict) -> GroupEffects:
    """The planted difference when none is given (module doc); empty without a single-choice question."""
    for question in questionnaire_questions(spec):
        if question["type"] == "single_choice":
            first = question["options"][0]
            return {question["key"]: {first: {"leniency": DEFAULT_EFFECT, "scale_shift": -DEFAULT_EFFECT}}}
    return {}


def check_group_effects(spec: dict, effects: GroupEffects) -> None:
    """Every question and option named in ``effects`` exists as a single-choice question of the study."""
    choices = {q["key"]: q["options"] for q in questionnaire_questions(spec) if q["type"] == "single_choice"}
    for question, options in effects.items():
        if question not in choices:
            raise ValueError(f"group effect on {question!r}: the study has no single-choice question with that key")
        for option in options:
            if option not in choices[question]:
                raise ValueError(f"group effect on {question}={option!r}: not one of {choices[question]}")


def draw_rater(spec: dict, effects: GroupEffects, rng: np.random.Generator) -> SimulatedRater:
    """A rater: single-choice answers uniform over the options; the chosen options' effects are added to
    the defaults (leniency, scale_shift, prediction_bias) or replace them (noise, alpha, honesty); then the
    rater's own style (module doc)."""
    group: dict[str, str] = {}
    params = {name: getattr(SimulatedRater, name) for name in EFFECT_FIELDS}
    for question in questionnaire_questions(spec):
        if question["type"] != "single_choice":
            continue
        option = str(rng.choice(question["options"]))
        group[question["key"]] = option
        for name, value in effects.get(question["key"], {}).get(option, {}).items():
            params[name] = params[name] + value if name in ("leniency", "scale_shift", "prediction_bias") else value
    params["leniency"] += rng.normal(0, STYLE_SD)
    params["scale_shift"] += rng.normal(0, STYLE_SD)
    return SimulatedRater(group=group, **params)


def agree_logit(score: float | None) -> float:
    """The agree base logit for an AI output with ``score`` (None: no score, c = 1/2)."""
    confidence = 0.5 if score is None else abs(2 * score - 1)
    return AGREE_BASE + AGREE_CONFIDENCE * confidence


def draw_binary(base_logit: float, rater: SimulatedRater, rng: np.random.Generator) -> tuple[int, float]:
    """A yes (1) / no (0) answer with logit P(yes) = base_logit + leniency + N(0, noise); returns
    the answer and the rater's probability without the noise (for the BTS prediction)."""
    p = float(expit(base_logit + rater.leniency))
    answer = int(rng.random() < expit(base_logit + rater.leniency + rng.normal(0, rater.noise)))
    return answer, p


def draw_sureness(p: float, rng: np.random.Generator) -> str:
    """A 5-point confidence that grows with how far the rater's probability is from 1/2."""
    return str(int(np.clip(round(1 + 8 * abs(p - 0.5) + rng.normal(0, 0.7)), 1, 5)))


def bts_prediction(p_positive: float, rater: SimulatedRater, rng: np.random.Generator, *, own: bool) -> str:
    """A BTS prediction (module doc): the rater's own probability of the positive answer in percent,
    PROJECTION points towards their own answer (``own``: they gave the positive answer), shifted by
    ``prediction_bias``, plus N(0, PREDICTION_SD^2), as a whole percentage in [0, 100]."""
    value = 100 * p_positive + (PROJECTION if own else -PROJECTION) + rater.prediction_bias
    return str(int(np.clip(round(value + rng.normal(0, PREDICTION_SD)), 0, 100)))


def share_below(cut: float, mean: float, sd: float) -> float:
    """P(X < cut) for X ~ N(mean, sd^2), sd floored at 1e-6: a rater's probability of a rating below
    ``cut`` (pair_distance: 'similar' answers; rate: 1 - this is P(rating >= positive_from))."""
    return float(norm.cdf((cut - mean) / max(sd, 1e-6)))


def accepts(leniency: float) -> float:
    """P(the rater accepts the AI's score) = expit(leniency) (1/2 for a neutral rater)."""
    return float(expit(leniency))


@dataclass(frozen=True)
class PairTruth:
    trajectory: float
    aggregate: float


def pair_truth(k_series, x_series, trend_scale: float) -> PairTruth:
    """True trajectory and aggregate differences in [0, 1] of a pair with effort series:
    t = |tanh((slope_X - slope_K) / trend_scale)|, g = min(1, 1.6 |total_X - total_K| / max(total_K, total_X))
    (``simulation.effort``'s model)."""
    t = abs(np.tanh((trend_slope(x_series) - trend_slope(k_series)) / trend_scale))
    total_k, total_x = float(np.sum(k_series)), float(np.sum(x_series))
    g = min(1.0, 1.6 * abs(total_x - total_k) / max(total_k, total_x, 1e-9))
    return PairTruth(float(t), g)
