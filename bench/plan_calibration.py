"""How plan_study's random-effect defaults compare with the effort-aware fairness paper (SHED).

For the demo study at the paper's size (148 participants: 74 per condition x 12 pairs = 888 pairs
per condition, as SHED's 888), over R simulated studies, for the income (SHED-like) condition:

* R^2 of Eq. 5 (paper, Table 5: 0.7794 SHED) and the plain OLS SEs of a1, a2 (0.0154, 0.0169);
* the width of the participant-bootstrap 95% CI of r_traj,input - r_aggr,input (Spearman) divided
  by the width of Zou's interval, which treats the pairs as independent. The paper's Table 4
  bootstrap CI (SHED [-0.1950, -0.0730]) is 1.43 times as wide as Zou's interval from its own
  Table 2 (0.0852; CLUE 0.1500 / 0.1211 = 1.24), the signature of ratings clustered by participant
  if, as we assume (the paper does not say), its bootstrap resampled participants;
* the mean ratio of the clustered to the plain SE of alpha.

Run: .venv/bin/python bench/plan_calibration.py [--studies 20] [--intercept-sd ..] [--slope-sd ..]
     [--stimulus-sd ..] [--noise ..]
"""

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import statsmodels.api as sm

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the study file's conversion and validation name its task types (translated strings)

from analysis.correlations import bootstrap_correlation_difference, compare_correlations, correlation  # noqa: E402
from analysis.effort_weight import alpha_estimate  # noqa: E402
from simulation.effort import GenerativeModel, simulate_pairs  # noqa: E402
from studies.services import stored_file  # noqa: E402


def main() -> None:
    defaults = GenerativeModel()
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=20)
    parser.add_argument("--n", type=int, default=148)
    parser.add_argument("--intercept-sd", type=float, default=defaults.participant_intercept_sd)
    parser.add_argument("--slope-sd", type=float, default=defaults.participant_slope_sd)
    parser.add_argument("--stimulus-sd", type=float, default=defaults.stimulus_sd)
    parser.add_argument("--noise", type=float, default=defaults.overall_noise)
    parser.add_argument("--condition", default="income")
    args = parser.parse_args()
    model = replace(
        defaults,
        participant_intercept_sd=args.intercept_sd,
        participant_slope_sd=args.slope_sd,
        stimulus_sd=args.stimulus_sd,
        overall_noise=args.noise,
    )
    spec, _ = stored_file(json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text()))  # its conversion
    r2, se1, se2, widths, se_ratio = [], [], [], [], []
    for i in range(args.studies):
        frame = simulate_pairs(spec, args.n, seed=1000 + i, model=model)
        frame = frame[frame["condition"] == args.condition]
        x = sm.add_constant(frame[["d_aggr", "d_traj"]].to_numpy(float))
        fit = sm.OLS(frame["d_overall"].to_numpy(float), x).fit()
        r2.append(fit.rsquared)
        se1.append(fit.bse[1])
        se2.append(fit.bse[2])
        r_ti = correlation(frame["d_traj"], frame["d_overall"]).statistic
        r_ai = correlation(frame["d_aggr"], frame["d_overall"]).statistic
        r_ta = correlation(frame["d_aggr"], frame["d_traj"]).statistic
        lo, hi = compare_correlations(r_ti, r_ai, r_ta, len(frame), method="zou", spearman=True).ci
        boot = bootstrap_correlation_difference(
            frame["participant_id"], frame["d_traj"], frame["d_aggr"], frame["d_overall"], n_resamples=1000, seed=i
        )
        widths.append((boot.ci[1] - boot.ci[0]) / (hi - lo))
        est = alpha_estimate(frame)
        se_ratio.append(est.se / est.se_plain)
    print(
        f"model: intercept_sd {args.intercept_sd}, slope_sd {args.slope_sd}, stimulus_sd {args.stimulus_sd}, "
        f"overall_noise {args.noise}; {args.studies} studies of {args.n} participants, {args.condition}"
    )
    print(f"R^2 of Eq. 5            {np.mean(r2):.4f}   (paper SHED 0.7794, CLUE 0.6580)")
    print(f"plain SE a1, a2         {np.mean(se1):.4f}, {np.mean(se2):.4f}   (paper SHED 0.0154, 0.0169)")
    print(f"bootstrap / Zou width   {np.mean(widths):.3f}   (paper SHED 1.43, CLUE 1.24)")
    print(f"clustered / plain SE    {np.mean(se_ratio):.3f}   (of alpha; paper: not reported)")


if __name__ == "__main__":
    main()
