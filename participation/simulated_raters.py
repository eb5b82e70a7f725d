"""One simulated rater of the generative model that ``simulate_participants`` draws answers from.

The task types turn a rater into a page's POST data (``TaskType.simulate``); the model that draws
raters (per-group means of these fields) lives with the simulation.
"""

from dataclasses import dataclass, field


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
