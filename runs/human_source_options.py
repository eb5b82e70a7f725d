"""The audit's options that read what people said in a study (no scientific imports: the web form lists them)."""

import math

# option (the API's and the form's field name) -> the command's option, the task types it reads, a name
OPTIONS = {
    "metric_from": ("--metric-from", ("pair_comparable", "triplet"), "a learned fair metric"),
    "utility_from": ("--utility-from", ("choose",), "a utility model"),
    "features_from": ("--features-from", ("feature_fairness",), "feature-fairness judgements"),
}
LIPSCHITZ = "lipschitz"  # the Lipschitz constant L of the audit under the human metric (--lipschitz)
SURROGATE = "surrogate"  # the model standing in for each audited model's scores under --features-from (--surrogate)
# the surrogates and their names in the form: fairness.human_audit.SURROGATES (not imported here: scipy)
SURROGATES = {
    "linear": "Linear regression",
    "forest": "Random forest (interactions)",
}


def lipschitz_problem(value: object) -> str | None:
    """Why ``value`` cannot be the audit's L (a finite number > 0, in the scores' units per unit of
    human-metric distance), or None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return None
    return (
        f"--lipschitz must be a finite number > 0 (the scores' units per unit of human-metric distance), not {value!r}"
    )


def surrogate_problem(value: object) -> str | None:
    """Why ``value`` cannot be the audit's surrogate (one of :data:`SURROGATES`), or None."""
    if value in SURROGATES:
        return None
    return f"--surrogate must be {' or '.join(SURROGATES)}, not {value!r}"


def parameter_problems(*, lipschitz: object, surrogate: object) -> dict[str, list[str]]:
    """The audit's parameters that are not sources (L and the surrogate): each field's problem."""
    problems = {LIPSCHITZ: lipschitz_problem(lipschitz), SURROGATE: surrogate_problem(surrogate)}
    return {name: [problem] for name, problem in problems.items() if problem}
