"""Adaptive against balanced assignment: judgements needed for the same mean CI width, and the time the
web worker takes to choose the next item.

Run: .venv/bin/python bench/adaptive.py [--task choose|pair_comparable|triplet] [--subjects 30]
     [--spread 2.0] [--features 4] [--rater-spread 0] [--off-diagonal 0] [--judgements 3000]
     [--seeds 20] [--first-seed 0] [--bootstrap 2000] [--jobs 2]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB --participants 200 --threads 8]
     .venv/bin/python bench/adaptive.py --write-study FILE.json [--task choose|pair_comparable|triplet]
         [--slots 10] [--balanced]
     (the study for bench/launch.py --study: --slots adaptive pages per participant; 40 gives 44 pages,
     the effort demo's length, so it runs under the same launch profile: --participants 1000 --think 4.5)

Part 1 (``simulation.adaptive``, no database): per seed, simulated raters answer items under each design,
10 per rater: ``--task choose`` (the default), pairs of ``--subjects`` subjects with known Bradley-Terry
strengths s ~ N(0, spread^2) (all pairs are candidates); ``pair_comparable`` (all pairs) and ``triplet``
(all triplets) of ``--subjects`` subjects with ``--features`` uniform features, judged under a diagonal
metric whose weights are ``simulation.metric``'s times exp(N(0, spread^2)) (default spread 1 for these;
``--rater-spread``: each rater's own weights, times exp(N(0, rater_spread^2)); ``--off-diagonal rho``: a
non-diagonal true metric, M = D^1/2 ((1 - rho) I + rho J) D^1/2, which the designs' diagonal model leaves
out; its diagonal stays the truth).
Three measures, each over seeds ``--first-seed`` .. + ``--seeds`` - 1:
* the balanced design's mean 95% CI width (of the strengths, or of the metric's weights) after
  ``--judgements`` judgements, and the adaptive design's judgements to reach it, read off its curve
  (recorded every ``--step``, linearly interpolated): their ratio per seed and its mean with a 95% t
  interval over seeds;
* the same ratio for the squared error of the estimates against the truth (summed over the parameters;
  the curves averaged over seeds, as one seed's curve is noisy), with a 95% percentile interval
  resampling the seeds (``--bootstrap`` times);
* the share of the design's 95% intervals that hold the truth after ``--judgements`` judgements, under
  each design, with a 95% t interval over seeds.
The seeds run ``--jobs`` at a time in worker processes. Runtime on the shared 2-core machine: about 9 min
for pair_comparable (20 seeds, one process, load 10), 23 min with --jobs 5 at load 25; triplet over an
hour (its fits are slower); the last line prints the wall time.

Part 2 (with ``--database-url``; the database is WIPED first): a choose study with an adaptive block
over the same kind of pairs is loaded, simulated participants take it (refits run as the job worker
would, between batches), then ``--participants`` new participants reach their first adaptive page from
``--threads`` threads at once; prints p50/p95/p99 of the decision time (``AdaptiveDecision.seconds``,
the block's lock wait included) and of the whole ``slot_item`` call.
"""

import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

from scipy.stats import t as t_dist  # noqa: E402

from core import strict_json  # noqa: E402
from simulation.adaptive import TASKS, simulate_elicitation  # noqa: E402
from simulation.metric import TRIPLET_SLOPE  # noqa: E402


def judgements_at(judgements, values, target: float) -> float:
    """Judgements at which a recorded curve (``values`` after ``judgements``) first reaches ``target`` (linear
    between records; NaN when it never does)."""
    points = [(n, v) for n, v in zip(judgements, values, strict=True) if np.isfinite(v)]
    for (n0, v0), (n1, v1) in zip(points, points[1:], strict=False):
        if v1 <= target:
            return float(n1) if v0 <= target else n0 + (v0 - target) / (v0 - v1) * (n1 - n0)
    return float("nan")


def mean_interval(values) -> tuple[float, float, float]:
    """The mean and its 95% t interval over seeds."""
    values = np.asarray(values, float)
    half = t_dist.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


def error_ratio(judgements, balanced: np.ndarray, adaptive: np.ndarray, total: int) -> float:
    """The adaptive design's judgements to reach the balanced design's mean squared error after ``total``
    judgements (both averaged over the seeds: rows), over ``total``."""
    return judgements_at(judgements, adaptive.mean(axis=0), balanced.mean(axis=0)[-1]) / total


def both_designs(options: dict, seed: int) -> dict:
    """One seed's simulated study under each design (a worker process's job)."""
    return {design: simulate_elicitation(design, **options, seed=seed) for design in ("balanced", "adaptive")}


def part_one(args) -> None:
    pairs = args.subjects * (args.subjects - 1) // 2
    if args.task == "choose":
        print(
            f"{args.subjects} subjects, strengths N(0, {args.spread:g}^2), all {pairs} "
            f"pairs candidates, 10 judgements per rater, refit every {args.refit_every}, {args.candidates} candidates"
        )
    else:
        items = (
            f"all {pairs} pairs"
            if args.task == "pair_comparable"
            else f"all {args.subjects * (pairs - args.subjects + 1)} triplets"
        )
        print(
            f"{args.task}: {args.subjects} subjects, {args.features} uniform features, metric weights "
            f"{TRIPLET_SLOPE / args.features:g} exp(N(0, {args.spread:g}^2)) (per rater times exp(N(0, "
            f"{args.rater_spread:g}^2))), off-diagonal correlation {args.off_diagonal:g}, {items} candidates, "
            f"10 judgements per rater, refit every {args.refit_every}, {args.candidates} candidates"
        )
    started = time.perf_counter()
    ratios: list[float] = []
    errors: dict[str, list[list[float]]] = {"balanced": [], "adaptive": []}
    coverage: dict[str, list[float]] = {"balanced": [], "adaptive": []}
    judgements: list[int] = []
    options = {
        "task": args.task,
        "n_features": args.features,
        "rater_spread": args.rater_spread,
        "off_diagonal": args.off_diagonal,
        "n_subjects": args.subjects,
        "spread": args.spread,
        "judgements": args.judgements,
        "step": args.step,
        "refit_every": args.refit_every,
        "candidates": args.candidates,
    }
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    with ProcessPoolExecutor(args.jobs) as pool:
        studies = list(pool.map(partial(both_designs, options), seeds))
    for seed, runs in zip(seeds, studies, strict=True):
        target = runs["balanced"].mean_ci_width[-1]
        needed = judgements_at(runs["adaptive"].judgements, runs["adaptive"].mean_ci_width, target)
        ratios.append(needed / args.judgements)
        judgements = runs["balanced"].judgements
        for design, run in runs.items():
            errors[design].append(run.squared_error)
            coverage[design].append(run.coverage[-1])
        print(
            f"seed {seed}: mean CI width {target:.3f}: balanced {args.judgements} judgements, adaptive "
            f"{needed:.0f}; ratio {needed / args.judgements:.2f}; squared error after {args.judgements}: balanced "
            f"{runs['balanced'].squared_error[-1]:.3f}, adaptive {runs['adaptive'].squared_error[-1]:.3f}",
            flush=True,
        )
    mean, low, high = mean_interval(ratios)
    print(
        f"\nover {args.seeds} seeds, judgements to the balanced design's CI width: adaptive/balanced {mean:.2f} "
        f"[95% CI {low:.2f}, {high:.2f}] (reduction {1 - mean:.0%} [{1 - high:.0%}, {1 - low:.0%}])"
    )
    curves = {design: np.array(rows, float) for design, rows in errors.items()}
    ratio = error_ratio(judgements, curves["balanced"], curves["adaptive"], args.judgements)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, args.seeds, (args.bootstrap, args.seeds))
    boot = np.array(
        [error_ratio(judgements, curves["balanced"][i], curves["adaptive"][i], args.judgements) for i in draws]
    )
    low, high = np.nanpercentile(boot, [2.5, 97.5])
    unreached = f"; {np.isnan(boot).mean():.0%} of resamples never reach it" if np.isnan(boot).any() else ""
    print(
        f"judgements to the balanced design's mean squared error against the truth (curves averaged over seeds): "
        f"adaptive/balanced {ratio:.2f} [95% CI {low:.2f}, {high:.2f}, seeds resampled {args.bootstrap} times"
        f"{unreached}] (reduction {1 - ratio:.0%})"
    )
    for design, shares in coverage.items():
        mean, low, high = mean_interval(shares)
        print(
            f"{design}: the design's 95% intervals hold the truth for {mean:.1%} [95% CI {low:.1%}, {high:.1%}] of "
            f"the parameters after {args.judgements} judgements"
        )
    print(f"{time.perf_counter() - started:.0f} s")


def part_two(args) -> None:
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    from participation.adaptive import block_items, slot_item
    from participation.models import AdaptiveDecision, AdaptiveFit
    from participation.services import participant_arrive, participant_consent
    from participation.simulate import simulate_participants
    from runs.execution import execute_job
    from runs.models import Job
    from studies.content import study_content
    from studies.services import study_load

    spec = adaptive_study_spec(args.subjects)
    study = study_load(spec=spec).study
    for batch in range(5):
        simulate_participants(SLUG, n=20, seed=batch, decline_rate=0)
        for job in Job.objects.filter(kind="adaptive_refit", status="queued"):
            execute_job(str(job.pk))
    print(f"{AdaptiveFit.objects.count()} fits; {AdaptiveDecision.objects.count()} decisions before the timing")
    items = block_items(study.spec, study_content(study.spec, study.spec_hash), "loan")
    people = []
    for i in range(args.participants):
        participant, _ = participant_arrive(study_slug=SLUG, external_id=f"timed-{i}", seed=i)
        people.append(participant_consent(participant_id=participant.pk, accept=True).pk)
    calls: list[float] = []
    queue = list(people)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not queue:
                    break
                pk = queue.pop()
            started = time.perf_counter()
            slot_item(participant_id=pk, study_id=study.pk, slot=0, block=items)
            calls.append(time.perf_counter() - started)
        connection.close()

    threads = [threading.Thread(target=work) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    decided = AdaptiveDecision.objects.filter(participant_id__in=people)
    inside = [s for s in decided.values_list("seconds", flat=True)]
    with_fit = decided.filter(fit__isnull=False).count()
    print(f"{len(calls)} next-item choices from {args.threads} threads at once ({with_fit} from a fit)")
    for name, values in (("decision (lock wait included)", inside), ("slot_item call", calls)):
        p50, p95, p99 = np.percentile(np.array(values) * 1000, [50, 95, 99])
        print(f"  {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms")


SLUG = "adaptive-choice"
TRIPLET_NEIGHBOURS = 20
SLUGS = {"choose": SLUG, "pair_comparable": "adaptive-comparable", "triplet": "adaptive-triplet"}


def adaptive_study_spec(n_subjects: int, *, task: str = "choose", slots: int = 10, balanced: bool = False) -> dict:
    """The bundled disagreement study with its task block replaced by an adaptive block of ``task`` over its
    first ``n_subjects`` defendants (``slots`` items per participant, refit every 50 answers; the study has
    4 other pages): ``choose`` every pair (block ``loan``, slug ``adaptive-choice``), ``pair_comparable``
    every pair and ``triplet`` each subject the anchor of every pair of the ``TRIPLET_NEIGHBOURS`` subjects
    after it in the pool, cyclically (5,700 triplets of 30 subjects: a block holds at most 10,000 items;
    block ``alike``); ``balanced``: the same block with balanced assignment (no ``adaptive`` option)."""
    spec = json.loads((ROOT / "studies/bundled/disagreement_synthetic.json").read_text())
    spec["slug"], pool = SLUGS[task], spec["pools"][0]
    pool["subjects"] = pool["subjects"][:n_subjects]
    ids = [s["id"] for s in pool["subjects"]]
    pairs = [{"a": a, "b": b} for i, a in enumerate(ids) for b in ids[i + 1 :]]
    block = {"key": "alike", "type": "task", "task": task, "pool": pool["key"]}
    if task == "choose":
        block |= {"key": "loan", "decision": "be released", "pairs": pairs}
    elif task == "pair_comparable":
        block["pairs"] = pairs
    else:
        after = [(ids[i + 1 :] + ids[:i])[:TRIPLET_NEIGHBOURS] for i in range(len(ids))]
        block["triplets"] = [
            {"anchor": anchor, "b": b, "c": c}
            for anchor, rest in zip(ids, after, strict=True)
            for i, b in enumerate(rest)
            for c in rest[i + 1 :]
        ]
    block["assignment"] = {"per_participant": slots} | ({} if balanced else {"adaptive": {"refit_every": 50}})
    spec["blocks"] = [b for b in spec["blocks"] if b["type"] != "task"] + [block]
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", type=int, default=30)
    parser.add_argument("--task", choices=TASKS, default="choose")
    parser.add_argument("--spread", type=float, help="default 2 (choose), 1 (pair_comparable, triplet)")
    parser.add_argument("--features", type=int, default=4, help="pair_comparable, triplet: features per subject")
    parser.add_argument(
        "--rater-spread", type=float, default=0.0, help="pair_comparable, triplet: SD of each rater's log weights"
    )
    parser.add_argument("--off-diagonal", type=float, default=0.0, help="pair_comparable, triplet: the metric's rho")
    parser.add_argument("--judgements", type=int, default=3000)
    parser.add_argument("--step", type=int, default=50)
    parser.add_argument("--refit-every", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=20, help="simulated studies per design (at least 2)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds --first-seed .. --first-seed + --seeds - 1")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples of the seeds (squared-error ratio)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds simulated at once, one process each")
    parser.add_argument("--database-url")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--skip-simulation", action="store_true")
    parser.add_argument(
        "--write-study", type=Path, help="write the adaptive study file of --task (for launch.py --study)"
    )
    parser.add_argument("--slots", type=int, default=10, help="--write-study: choose pages per participant")
    parser.add_argument("--balanced", action="store_true", help="--write-study: the same study, balanced assignment")
    args = parser.parse_args()
    if args.spread is None:
        args.spread = 2.0 if args.task == "choose" else 1.0
    if args.write_study:
        args.write_study.write_text(
            strict_json.dumps(
                adaptive_study_spec(args.subjects, task=args.task, slots=args.slots, balanced=args.balanced), indent=1
            )
        )
        return
    if not args.skip_simulation:
        part_one(args)
    if args.database_url:
        part_two(args)


if __name__ == "__main__":
    main()
