"""Coverage of the pooled utility weights' intervals under rater heterogeneity (issue 21, part 2): the
rater-clustered CR1 t interval that ``analysis.paired_comparison.utility_model`` prints against a percentile
rater bootstrap of the same pooled logit, at the sizes the ``choice`` builder template produces (20 choices per
rater over 20 subjects; 30 and 60 raters) with random slopes (rater r's weights N(w, spread^2 I)).

Both intervals target the population-averaged weight (the pooled logit's estimand; with random slopes it is
attenuated from the raters' mean weight w, WeBuildAI's "average stakeholder"), computed here from one pooled fit
on 100,000 simulated raters. A random-intercept-and-slope (mixed logit) model would target w itself; it is not
fitted (a per-rater integral per iteration), so the README states which estimand the printed weights have.

    python bench/utility_rater_effects.py [--studies 400] [--boot 399] [--seed 1]
"""

import argparse
import time

import numpy as np
from scipy import special, stats

WEIGHTS = np.array([1.0, -0.5, 0.0])
CHOICES, SUBJECTS = 20, 20


def simulate(x, rng, raters, spread):
    """Per rater ``CHOICES`` random pairs; returns (rater index, difference design, 1 when the first wins)."""
    w = WEIGHTS + rng.normal(0, spread, (raters, len(WEIGHTS)))
    rater = np.repeat(np.arange(raters), CHOICES)
    a = rng.integers(0, len(x), rater.size)
    b = (a + rng.integers(1, len(x), rater.size)) % len(x)
    d = x[a] - x[b]
    y = (rng.uniform(size=rater.size) < special.expit(np.einsum("nk,nk->n", w[rater], d))).astype(float)
    return rater, d, y


def logit(d, y, weights=None):
    """Logit MLE without intercept by Newton's method (``weights``: each row's multiplicity)."""
    m = np.ones(len(y)) if weights is None else weights
    beta = np.zeros(d.shape[1])
    for _ in range(50):
        p = special.expit(d @ beta)
        step = np.linalg.solve((d * (m * p * (1 - p))[:, None]).T @ d, d.T @ (m * (y - p)))
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def cr1_interval(d, y, rater, beta, level=0.95):
    """statsmodels' cluster-robust CR1 sandwich with G - 1 df t quantiles (what utility_model prints)."""
    p = special.expit(d @ beta)
    bread = np.linalg.inv((d * (p * (1 - p))[:, None]).T @ d)
    scores = np.zeros((rater.max() + 1, d.shape[1]))
    np.add.at(scores, rater, d * (y - p)[:, None])
    g, n, k = len(scores), len(y), d.shape[1]
    adjust = g / (g - 1) * (n - 1) / (n - k)
    se = np.sqrt(np.diag(bread @ (adjust * scores.T @ scores) @ bread))
    t = stats.t.ppf(0.5 + level / 2, g - 1)
    return beta - t * se, beta + t * se


def bootstrap_interval(d, y, rater, rng, n_boot, level=0.95):
    """Percentile interval of the pooled logit over rater resamples (each rater's choices kept together)."""
    raters = rater.max() + 1
    draws = [logit(d, y, np.bincount(rng.integers(0, raters, raters), minlength=raters)[rater]) for _ in range(n_boot)]
    return np.quantile(draws, 0.5 - level / 2, axis=0), np.quantile(draws, 0.5 + level / 2, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument("--boot", type=int, default=399)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    x = rng.normal(size=(SUBJECTS, len(WEIGHTS)))
    print(f"{args.studies} studies per row, {args.boot} rater resamples; coverage of the 95% intervals per weight")
    print("raters spread  truth (population-averaged)   CR1 t                bootstrap            widths CR1/boot")
    for spread in (0.5, 1.0):
        truth = logit(*simulate(x, rng, 100_000, spread)[1:])
        for raters in (30, 60):
            start = time.perf_counter()
            cr1, boot, widths = [], [], []
            for _ in range(args.studies):
                rater, d, y = simulate(x, rng, raters, spread)
                beta = logit(d, y)
                low, high = cr1_interval(d, y, rater, beta)
                b_low, b_high = bootstrap_interval(d, y, rater, rng, args.boot)
                cr1.append((low <= truth) & (truth <= high))
                boot.append((b_low <= truth) & (truth <= b_high))
                widths.append((high - low) / (b_high - b_low))
            fmt = lambda values: " ".join(f"{v:.3f}" for v in values)  # noqa: E731
            print(
                f"{raters:>6} {spread:>6} {fmt(truth):>26}   {fmt(np.mean(cr1, axis=0)):<20} "
                f"{fmt(np.mean(boot, axis=0)):<20} {np.mean(widths):.3f}  ({time.perf_counter() - start:.0f} s)"
            )


if __name__ == "__main__":
    main()
