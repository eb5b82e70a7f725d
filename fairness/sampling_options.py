"""The options of sampled pairwise metrics, light (no scientific import) so that the web process validates an
audit request without loading ``fairness.pair_sampling``: the bounds' names, the audit's default number of pairs
and the limits on the pairs and on a target half-width."""

BOUNDS = ("bernstein", "hoeffding", "normal")  # the first is the default (fairness.pair_sampling)
LEVEL = 0.95  # the audit's intervals' confidence level
SAMPLED_PAIRS = 2_000_000  # pairs drawn by the model audit above its exact limit
MIN_PAIRS = 1_000
MAX_PAIRS = 10**9  # the cap on the pairs an audit draws, with or without a target half-width
# The narrowest target half-width: Hoeffding's interval reaches h after ln(2 / 0.05) / (2 h^2) pairs, 7.4e8 at
# 5e-5, under MAX_PAIRS; a narrower target could run into the cap whatever the data.
MIN_HALF_WIDTH = 5e-5
