"""How many participants a group needs before it is worth comparing with another, and the warnings
for groups below that (quota groups in a study's plan, rater groups in the per-group analyses)."""

import math
from collections.abc import Mapping


def min_group_size(effect_size: float = 0.5, *, power: float = 0.8, alpha: float = 0.05) -> int:
    """Participants per group for a two-sided two-sample t test (equal groups) to detect a standardised
    difference ``effect_size`` (Cohen's d) with ``power`` at level ``alpha``: the smallest integer n with
    power >= ``power`` (statsmodels' ``TTestIndPower``, noncentral t). Cohen (1988), Statistical Power
    Analysis, Table 2.4.1: 64 per group for a medium difference (d = 0.5), 26 for a large one (d = 0.8)."""
    from statsmodels.stats.power import TTestIndPower

    n = TTestIndPower().solve_power(effect_size=effect_size, power=power, alpha=alpha, alternative="two-sided")
    return math.ceil(n - 1e-9)


def small_group_warnings(sizes: Mapping[str, float], *, minimum: int | None = None) -> list[str]:
    """One warning per group whose (planned or actual) size is below ``minimum`` (default
    ``min_group_size()``: 64, a medium difference d = 0.5 with power 0.8 at two-sided alpha .05)."""
    minimum = min_group_size() if minimum is None else minimum
    return [
        f"{group}: {size:g} participants, fewer than the {minimum} per group that detect a medium difference "
        "between two groups (Cohen's d = 0.5, power 0.8, two-sided alpha .05); comparisons with this group "
        "will be imprecise."
        for group, size in sizes.items()
        if size < minimum
    ]
