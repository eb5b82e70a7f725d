"""Coverage of the per-rater-group alpha CIs (``fairness.rater_group_alpha.alpha_by_rater_group``) when
stimuli vary, on the project's simulator (``simulation.effort.simulate_pairs``: the demo study, 12 pairs per
condition, stimulus effects drawn afresh per simulated study).

Each condition's participants are split into two rater groups (alternate participants; the same weights,
so each group's estimand is alpha of its pooled fit over the other simulated studies, as in plan_study).
Per group: the share of studies whose participant-bootstrap CI (``ci_participants``: alpha for the study's
own pairs) and two-way bootstrap CI (``ci_stimuli``: generalising) cover that estimand, their Monte Carlo
SE sqrt(p (1 - p) / R) and mean widths.

Run: .venv/bin/python bench/rater_group_alpha_coverage.py [--studies 100] [--n 150] [--stimulus-sd 0.3]
     [--resamples 400] [--seed 2026]
"""

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the study file's validation names its task types (translated strings)

from analysis.repeated_measures import design  # noqa: E402
from fairness.rater_group_alpha import alpha_by_rater_group  # noqa: E402
from simulation.effort import GenerativeModel, simulate_pairs  # noqa: E402
from simulation.planning import _leave_one_out_estimands, mc_se  # noqa: E402
from studies.services import stored_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--n", type=int, default=150)
    parser.add_argument("--stimulus-sd", type=float, default=0.3)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    model = replace(GenerativeModel(), stimulus_sd=args.stimulus_sd)
    spec, _ = stored_file(json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text()))  # its conversion
    seeds = np.random.default_rng(args.seed).integers(2**62, size=args.studies)
    moments, intervals = [], []
    for study, seed in enumerate(seeds):
        pairs = simulate_pairs(spec, args.n, seed=int(seed), model=model)
        number = pairs["participant_id"].str.removeprefix("sim-").astype(int)
        pairs = pairs.assign(
            stimulus=pairs["set"] + "/" + pairs["comparison"], group=(number // 2 % 2).map("g{}".format)
        )
        for cond, frame in pairs.groupby("condition"):
            result = alpha_by_rater_group(
                frame, "group", n_resamples=args.resamples, n_permutations=9, seed=study, generalise="stimuli"
            )
            for group, part in frame.groupby("group"):
                x = design(part, ["d_aggr", "d_traj"])
                moments.append((f"{cond} {group}", x.T @ x, x.T @ part["d_overall"].to_numpy(float)))
                estimate = result.by_group[group]
                intervals.append((estimate.ci_participants, estimate.ci_stimuli))
    targets, _ = _leave_one_out_estimands(moments)
    print(
        f"{args.studies} studies of {args.n} participants, stimulus SD {args.stimulus_sd:g}, "
        f"{args.resamples} resamples; two rater groups per condition"
    )
    keys = [key for key, _, _ in moments]
    for key in dict.fromkeys(keys):
        rows = [i for i, k in enumerate(keys) if k == key]
        line = [key]
        for kind, index in (("participants", 0), ("stimuli", 1)):
            covered = np.mean([intervals[i][index][0] <= targets[i] <= intervals[i][index][1] for i in rows])
            width = np.mean([intervals[i][index][1] - intervals[i][index][0] for i in rows])
            line.append(f"ci_{kind} covers {covered:.3f} (MC SE {mc_se(covered, len(rows)):.3f}), width {width:.3f}")
        print("; ".join(line))
    for kind, index in (("participants", 0), ("stimuli", 1)):
        covered = np.mean([lo <= t <= hi for (lo, hi), t in zip((iv[index] for iv in intervals), targets, strict=True)])
        print(f"pooled ci_{kind}: {covered:.3f} (MC SE {mc_se(covered, len(targets)):.3f})")


if __name__ == "__main__":
    main()
