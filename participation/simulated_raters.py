"""Simulated raters for format 2 studies: a generative model in which rater groups really differ (pure).

A rater belongs to a group (their questionnaire answers) and carries the group's effects plus their own
response style. Rater i in group g (``draw_rater``):
  leniency_i    = leniency_g + N(0, style_sd^2)       logit shift of agreeing with the AI / saying "comparable"
  scale_shift_i = scale_shift_g + N(0, style_sd^2)    shift of ratings, in scale units
and the group's ``noise``, ``alpha`` (effort weight, pair_distance), ``honesty`` and ``prediction_bias``.
The answer draws, with logistic(x) = 1 / (1 + e^-x) and e ~ N(0, noise^2) per answer:
  agree:           P(agree) = logistic(AGREE_BASE + leniency_i + AGREE_CONFIDENCE * c + e),
                   c = |2 * score - 1| the AI's confidence (1 when the model has no score); the optional
                   confidence answer is 1 + round(4 * |2 P - 1|).
  rate:            latent = lo + (hi - lo) * r + scale_shift_i + e, r the subject's true risk (the model's
                   score, 0.5 without one), cut into the scale: likert k labels -> round to 1..k over
                   [lo, hi] = [1, k]; number -> rounded to the step and clipped to [min, max].
  pair_comparable: P(yes) = logistic(COMPARABLE_BASE + leniency_i - COMPARABLE_SLOPE * d + e), d in [0, 1] the
                   feature distance of A and B (``feature_distance``); strength as agree's confidence.
  BTS prediction:  100 * (P(positive) + PROJECTION * (+1 if own answer positive else -1)) + prediction_bias
                   + N(0, PREDICTION_SD^2), clipped to 0..100: an estimate of the share answering
                   "positive", biased towards one's own answer (false consensus).
  attention:       correct with probability ``honesty``.
  questionnaire:   the rater's group answer where the group defines one, else uniform over the options.
Group effects come from a table ``{question: {option: {field: value}}}`` (``GroupEffects``, the
``--group-effect`` option); options not in the table take the defaults of :class:`SimulatedRater`.
``default_group_effects`` plants a difference on
the study's first single-choice question: its first option's raters are ``DEFAULT_EFFECT`` more lenient
(logit) and rate ``DEFAULT_EFFECT`` scale units lower than the other options' raters.
"""

from dataclasses import dataclass, field

import numpy as np

AGREE_BASE = 0.4
AGREE_CONFIDENCE = 1.0
COMPARABLE_BASE = 1.5
COMPARABLE_SLOPE = 4.0
PROJECTION = 0.1
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


def logistic(x: float) -> float:
    return float(1 / (1 + np.exp(-x)))


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


def _certainty(p: float) -> int:
    """A 1..5 confidence/strength answer from how far the answer's probability is from a coin flip."""
    return int(1 + round(4 * abs(2 * p - 1)))


def agree_answer(rater: SimulatedRater, score: float | None, rng: np.random.Generator) -> tuple[int, int, float]:
    """(agree 1/0, confidence 1..5, P(agree)) for an AI output with ``score`` (None: no score)."""
    confidence = 1.0 if score is None else abs(2 * score - 1)
    p = logistic(AGREE_BASE + rater.leniency + AGREE_CONFIDENCE * confidence + rng.normal(0, rater.noise))
    return int(rng.random() < p), _certainty(p), p


def comparable_answer(rater: SimulatedRater, distance: float, rng: np.random.Generator) -> tuple[int, int, float]:
    """(comparable 1/0, strength 1..5, P(yes)) for a pair at feature distance ``distance`` in [0, 1]."""
    p = logistic(COMPARABLE_BASE + rater.leniency - COMPARABLE_SLOPE * distance + rng.normal(0, rater.noise))
    return int(rng.random() < p), _certainty(p), p


def rate_answer(rater: SimulatedRater, risk: float, scale: dict, rng: np.random.Generator) -> float:
    """A rating of a subject with true risk ``risk`` in [0, 1] on ``scale`` (module doc)."""
    if scale["type"] == "likert":
        lo, hi = 1.0, float(len(scale["labels"]))
    else:
        lo, hi = float(scale["min"]), float(scale["max"])
    latent = lo + (hi - lo) * risk + rater.scale_shift + rng.normal(0, rater.noise)
    if scale["type"] == "likert":
        return float(np.clip(round(latent), lo, hi))
    step = float(scale.get("step") or 1)
    return float(np.clip(lo + step * round((latent - lo) / step), lo, hi))


def bts_prediction(rater: SimulatedRater, p_positive: float, positive: bool, rng: np.random.Generator) -> int:
    """Predicted percentage of others giving the positive answer (module doc)."""
    share = p_positive + PROJECTION * (1 if positive else -1)
    value = 100 * share + rater.prediction_bias + rng.normal(0, PREDICTION_SD)
    return int(np.clip(round(value), 0, 100))


def feature_distance(a: dict, b: dict, ranges: dict[str, float]) -> float:
    """Mean over the features of |a - b| / range (numbers) or 0/1 (other values mismatching), in [0, 1]."""
    parts = []
    for column, x in a.items():
        y = b.get(column)
        if isinstance(x, int | float) and isinstance(y, int | float):
            span = ranges.get(column) or 0.0
            parts.append(abs(x - y) / span if span > 0 else 0.0)
        else:
            parts.append(float(x != y))
    return float(np.mean(parts)) if parts else 0.0


def feature_ranges(subjects: list[dict]) -> dict[str, float]:
    """max - min of every numeric feature over a pool's subjects (for ``feature_distance``)."""
    values: dict[str, list[float]] = {}
    for subject in subjects:
        for column, x in subject["features"].items():
            if isinstance(x, int | float):
                values.setdefault(column, []).append(float(x))
    return {column: max(xs) - min(xs) for column, xs in values.items()}


def questionnaire_answer(question: dict, rater: SimulatedRater, rng: np.random.Generator) -> str | list[str]:
    """POST value(s) for one questionnaire question: the rater's group answer or a uniform draw."""
    kind = question["type"]
    if question["key"] in rater.group:
        return rater.group[question["key"]]
    if kind == "single_choice":
        return str(rng.choice(question["options"]))
    if kind == "multiple_choice":
        options = question["options"]
        low = question.get("min_choices", 1)
        high = question.get("max_choices", len(options))
        k = int(rng.integers(low, high + 1))
        return [str(o) for o in rng.choice(options, size=k, replace=False)]
    if kind == "number":
        low, high = question.get("min", 0), question.get("max", 100)
        value = rng.uniform(low, high)
        return str(int(round(value)) if question.get("integer") else round(value, 2))
    if kind == "likert":
        return str(int(rng.integers(1, len(question["labels"]) + 1)))
    return "simulated answer"
