"""plan_study from the command line or as a background job: its parameters (one set of ranges for
the command's options and the API's fields), the generative model they define, and the stored
report (report.html, plan.csv, results.json)."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from analysis.group_size import small_group_warnings
from research.export import table_records
from runs.plan_parameters import DEFAULT_MODEL, check_weights
from runs.reports.base import Section, render_report, table_context, write_csv, write_json
from simulation.effort import GenerativeModel
from simulation.planning import PlanResult, plan_study
from studies.quotas import planned_group_sizes


def plan_model(params: dict) -> GenerativeModel:
    """The generative model with the given parameters (others at their defaults)."""
    return replace(
        DEFAULT_MODEL,
        a1=params["a1"],
        a2=params["a2"],
        overall_noise=params["noise"],
        participant_intercept_sd=params["participant_intercept_sd"],
        participant_slope_sd=params["participant_slope_sd"],
        stimulus_sd=params["stimulus_sd"],
    )


def run_plan(spec: dict, params: dict, *, progress: Callable[[int], None] | None = None) -> PlanResult:
    """plan_study on the validated format 2 file ``spec`` with validated parameters (see PLAN_PARAMETERS)."""
    check_weights(params["a1"], params["a2"])
    result = plan_study(
        spec,
        n=params["n"],
        n_studies=params["studies"],
        seed=params["seed"],
        model=plan_model(params),
        n_resamples=params["resamples"],
        stimulus_copies=params["stimulus_copies"],
        size_studies=params.get("size_studies", 0),
        progress=progress,
    )
    warnings = small_group_warnings(planned_group_sizes(spec, params["n"]))
    return replace(result, warnings=tuple(f"Quota group {w}" for w in warnings))


def plan_results(result: PlanResult) -> dict:
    """results.json and the job's result: settings, the true alpha and the table as records."""
    return {
        "n": result.n,
        "studies": result.n_studies,
        "seed": result.seed,
        "true_alpha": result.true_alpha,
        "resamples": result.n_resamples,
        "stimulus_copies": result.stimulus_copies,
        "model": result.model,
        "table": table_records(result.table),
        "warnings": list(result.warnings),
        "stimuli": table_records(result.stimuli),
        "sizes": table_records(result.sizes),
    }


def write_plan_report(result: PlanResult, out_dir: Path, *, title: str) -> Path:
    """report.html, plan.csv and results.json in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(result.table, out_dir / "plan.csv")
    write_csv(result.stimuli, out_dir / "stimuli.csv")
    if len(result.sizes):
        write_csv(result.sizes, out_dir / "sizes.csv")
    write_json(plan_results(result), out_dir / "results.json")
    m = result.model
    intro = [
        f"{result.n_studies} simulated studies of {result.n} participants (seed {result.seed}); generating "
        f"alpha = a2 / (a1 + a2) = {result.true_alpha:.4f} (a1 {m['a1']:g}, a2 {m['a2']:g}); random effects: "
        f"participant intercept SD {m['participant_intercept_sd']:g}, participant slope SD "
        f"{m['participant_slope_sd']:g}, stimulus SD {m['stimulus_sd']:g}, noise SD {m['overall_noise']:g}; "
        f"{int(result.table['n_stimuli'].max())} stimulus pairs per condition; two-way bootstrap with "
        f"{result.n_resamples} resamples.",
        "estimand: what the estimator converges to (the pooled fit over all simulated studies, i.e. alpha of the "
        "population of participants and stimuli); it differs from the generating alpha because the ratings are "
        "rounded to the Likert scale and clipped at its ends: bias = estimand - generating alpha.",
        *result.warnings,
    ]
    notes = [
        "coverage: share of simulated studies whose 95% CI of alpha (delta method, participant-clustered SEs: "
        "alpha for the study's own stimulus pairs) contains the estimand (that of the other simulated studies); "
        "coverage_generating: the same CI against the generating alpha (bias and coverage mixed); coverage_plain: "
        "plain OLS SEs, which treat a participant's ratings as independent; coverage_two_way: the generalising "
        "CI (two-way bootstrap of participants and stimulus pairs, the calibration's CI with generalise = "
        "stimuli); se_ratio: mean clustered / plain SE of alpha.",
        "steiger_power: Steiger's test of r_traj,input > r_aggr,input (Bonferroni over 4 tests; pairs "
        "treated as independent); wald_power: participant-clustered Wald test of a1 = a2 with a2 > a1.",
        "Every share p comes with its Monte Carlo standard error sqrt(p (1 - p) / R) over the R simulated "
        "studies (the *_mcse rows; columns in plan.csv). Stimulus effects are drawn afresh for each "
        "simulated study, so with a stimulus SD above 0 the clustered intervals cover the population estimand "
        "less than 95%: they resample participants, not stimuli; the two-way interval generalises.",
    ]
    section = Section(
        title="Precision, coverage and power per condition",
        paragraphs=notes,
        tables=[
            table_context(
                result.table.drop(columns="n_stimuli").set_index("condition").T.rename_axis("measure"), index=True
            )
        ],
    )
    stimuli = Section(
        title="How more stimulus pairs narrow alpha's spread (projection)",
        paragraphs=[
            "With m times as many stimulus pairs of the same design, each participant still rating 12: alpha's "
            "standard deviation over studies, sd_alpha = sqrt(sd_participants^2 + sd_stimuli^2), projected from "
            "these simulated studies (sd_participants: the mean clustered SE; sd_stimuli^2: the rest of the "
            "variance of alpha over the studies, divided by m); ci_width = 3.92 sd_alpha, the width a calibrated "
            "generalising 95% CI would have.",
            "The pipeline's generalising CI (two-way pigeonhole bootstrap) is calibrated for the complete design, "
            "every participant rating every pair; when each participant rates only some of the pairs it is "
            "conservative and hardly narrows (simulate it with --stimulus-copies m).",
        ],
        tables=[table_context(result.stimuli)],
    )
    sections = [section, stimuli]
    if len(result.sizes):
        sections.append(
            Section(
                title="Size of the headline tests when stimuli vary (null: the population's value)",
                paragraphs=SIZE_NOTES,
                tables=[table_context(size_overview(result.sizes), index=True)],
            )
        )
    return render_report(out_dir, title, sections, intro=intro)


SIZE_NOTES = [
    "Share of simulated studies in which each headline test (on the overall rating d) rejects at 5% the "
    "population's value: H0 theta = theta*, theta* the pooled fit of the other simulated studies (for r, the "
    "pooled Spearman correlations), with the stimulus effects drawn afresh per study at each stimulus SD; "
    "the plan's other parameters, the same study seeds at every SD. Rows 'for these stimuli' are the default "
    "headline tests (participants resampled: valid for the study's own stimulus pairs); rows 'generalising' "
    "are the two-way bootstrap tests used with generalise = stimuli (valid for stimulus pairs like these, "
    "conservative). Monte Carlo SE of each share in sizes.csv (size_mcse).",
]


def size_overview(sizes: pd.DataFrame) -> pd.DataFrame:
    """The sizes with one column per stimulus SD (rows: model, hypothesis, inference)."""
    return sizes.pivot_table(
        index=["model", "hypothesis", "inference"], columns="stimulus_sd", values="size", sort=False
    ).rename(columns=lambda sd: f"stimulus SD {sd:g}")
