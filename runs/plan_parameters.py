"""plan_study's parameters: one set of ranges and defaults for the command's options and the API's
fields (light: the web process validates a request without loading the simulation)."""

from dataclasses import dataclass

from simulation.effort_model import SIZE_STIMULUS_SDS, GenerativeModel

DEFAULT_MODEL = GenerativeModel()


@dataclass(frozen=True)
class PlanParameter:
    """One parameter: its range (inclusive), whether it is an integer, its default and meaning."""

    low: float
    high: float
    integer: bool
    default: float
    help: str


PLAN_PARAMETERS: dict[str, PlanParameter] = {
    "n": PlanParameter(4, 5000, True, 150, "participants per simulated study"),
    "studies": PlanParameter(1, 5000, True, 100, "simulated studies (Monte Carlo replications)"),
    "seed": PlanParameter(0, 2**62, True, 1, "seed of the simulation"),
    "a1": PlanParameter(-10, 10, False, DEFAULT_MODEL.a1, "mean weight of the aggregate distance d_S (Eq. 5)"),
    "a2": PlanParameter(-10, 10, False, DEFAULT_MODEL.a2, "mean weight of the trajectory distance d_E (Eq. 5)"),
    "noise": PlanParameter(
        0, 10, False, DEFAULT_MODEL.overall_noise, "SD of the overall rating's noise (Likert points)"
    ),
    "participant_intercept_sd": PlanParameter(
        0, 5, False, DEFAULT_MODEL.participant_intercept_sd, "SD of participants' random intercepts"
    ),
    "participant_slope_sd": PlanParameter(
        0, 5, False, DEFAULT_MODEL.participant_slope_sd, "SD of participants' random slopes on d_S and d_E"
    ),
    "stimulus_sd": PlanParameter(0, 5, False, DEFAULT_MODEL.stimulus_sd, "SD of the pairs' (stimuli's) random effects"),
    "resamples": PlanParameter(100, 5000, True, 500, "two-way bootstrap resamples per simulated study"),
    "stimulus_copies": PlanParameter(
        1, 20, True, 1, "times as many stimulus pairs of the same design (each participant still rates 12)"
    ),
    "size_studies": PlanParameter(
        0,
        5000,
        True,
        0,
        "simulated studies per stimulus SD ("
        + ", ".join(f"{sd:g}" for sd in SIZE_STIMULUS_SDS)
        + ") measuring the headline tests' size (0: not measured)",
    ),
}


# The design check (``runs.design_check``): simulated runs by default, and the rater groups the builder's checks
# split by (its questionnaire's stakeholder role, ``studies.builder.stakeholder_questionnaire``).
DESIGN_CHECK_REPLICATIONS = 3
BUILDER_BY = ("role",)


def plan_total(params: dict) -> int:
    """The simulated studies a plan runs: ``studies``, then ``size_studies`` per stimulus SD of the sizes."""
    return params["studies"] + len(SIZE_STIMULUS_SDS) * params.get("size_studies", 0)


def check_weights(a1: float, a2: float) -> None:
    """alpha = a2 / (a1 + a2) needs a positive total weight."""
    if not a1 + a2 > 0:
        raise ValueError(f"a1 + a2 must be positive (alpha = a2 / (a1 + a2)), got {a1} + {a2}")
