"""The analysis report's content: tables (DataFrames), Plotly figures and the JSON results (pure;
no Django). The HTML is rendered from templates by ``runs.reports.effort``."""

import json

import pandas as pd
import plotly.graph_objects as go

from analysis.pipeline import PipelineResult
from analysis.repeated_measures import FAMILY_METHOD, FAMILY_NAME, HEADLINE_FAMILY, HEADLINE_FAMILY_STIMULI

# headline (participant-level) first, then the paper's pair-level tables, labelled descriptive
TABLES = (
    "participant_level",
    "mixed_models",
    "effect_sizes",
    "table2",
    "rm_correlations",
    "icc",
    "table3",
    "table4",
    "table5",
    "factor_shares",
)
HEADINGS = {
    "calibrations": "Calibration (alpha = a2 / (a1 + a2))",
    "participant_level": "Headline: participant-level tests (participant bootstrap, cluster-robust Wald)",
    "mixed_models": "Mixed models with crossed random effects for participant and stimulus (Eq. 5-8)",
    "effect_sizes": "Effect sizes: a2 - a1 per participant (two-stage), Cohen's d with CI",
    "table2": "Table 2: Spearman correlations (descriptive: pairs treated as independent)",
    "rm_correlations": "Repeated-measures correlations beside Table 2 (rmcorr)",
    "icc": "Inter-rater agreement on the Likert ratings (ICC)",
    "table3": "Table 3: Hotelling and Steiger tests (descriptive: pairs treated as independent)",
    "table4": "Table 4: participant-bootstrap 95% CIs of r_traj - r_aggr",
    "table5": "Table 5: regressions (ols rows descriptive, clustered rows participant-level)",
    "factor_shares": "Rationale factors chosen",
}
NOTES = {
    "calibrations": [
        "Two 95% CIs with two estimands: 'these stimuli' resamples participants and is alpha for the study's own "
        "stimulus pairs; 'generalising over stimuli' also resamples the pairs (two-way pigeonhole bootstrap, "
        "Owen 2007) and is alpha for a population of stimulus pairs like them, wider. The calibration's CI is the "
        'second when the study file sets analysis.generalise = "stimuli" (or --generalise stimuli), else the first.',
        "Caveat: alpha is a ratio of linear weights of Likert ratings, used by EaIF as the weight of squared "
        "differences of effort E and aggregate S on their own scales; read it as the relative importance of "
        "trajectory over aggregate, not as a calibrated metric weight (see analysis.pipeline.alpha_from).",
    ],
    "participant_level": [
        "Estimand (column estimand of participant_level.csv): the participant bootstrap and cluster Wald rows "
        "resample participants only, so they are for the study's own stimulus pairs: with stimulus effects they "
        "can reject a true null for other stimuli far more often than 5%. With generalise = stimuli the family's "
        "RQ1-RQ2 rows are two-way bootstrap rows (participants and stimulus pairs resampled: for a population of "
        "stimulus pairs like these; conservative with small stimulus effects, about 8% instead of 5% in "
        "simulations with stimulus SD 0.3) and the participant-level rows are second opinions. "
        "The mixed models below treat stimuli as random (intercepts only).",
        f"Family for multiple testing ('{FAMILY_NAME}'): {HEADLINE_FAMILY} (with generalise = stimuli: "
        f"{HEADLINE_FAMILY_STIMULI}); "
        f"p (Holm) is {FAMILY_METHOD.capitalize()}'s adjustment over the rows marked in the family "
        "(statsmodels multipletests). Read a row as significant when p (Holm) < .05; the bootstrap rows of "
        "a2 - a1, a4 and a5 are second opinions outside the family.",
    ],
    "mixed_models": [
        "The rows 'a2 - a1' are the Wald z-test and 95% CI of the trajectory weight minus the aggregate weight. "
        "Each model's variance components and any warning are listed under the table; a model that did not "
        "converge, or has a warning, should not be interpreted.",
    ],
    "effect_sizes": [
        "Positive values: trajectory weighs more than aggregate for the typical participant.",
    ],
    "table2": [
        "Descriptive: n counts rated pairs as if they were independent, so the p-values and Fisher CIs are too "
        "small when participants differ; the participant-level tests above are the inference. Bonferroni is over "
        "the five correlations of one condition, as in the paper.",
    ],
    "rm_correlations": [
        "df = N - participants - 1; pingouin rounds the CIs to 2 decimals.",
    ],
    "icc": [
        "The condition's stimuli (rated pairs) are the targets and its participants the raters; only "
        "participants who rated every stimulus count (Raters). pingouin rounds the CIs to 2 decimals.",
    ],
    "table3": [
        "Rows with convention 'paper' reproduce the paper's Table 3: Hotelling's t and, as its "
        "'Steiger's Z-test (Meng, Rosenthal and Rubin 1992)', the Meng-Rosenthal-Rubin Z, both on the "
        "Spearman correlations without any Spearman adjustment.",
        "Rows with convention 'fieller' are the better-calibrated statistics for Spearman correlations: "
        "Hotelling's t and Steiger's Z1* divided by sqrt(1.06) (Fieller-Hartley-Pearson variance "
        "1.06/(n-3)). Bonferroni p-values are over the four tests of one convention and condition.",
    ],
}


def ratings_figure(pairs: pd.DataFrame) -> go.Figure:
    """Violins of the three Likert distances per condition."""
    fig = go.Figure()
    for column, name in (("d_traj", "trajectory d_E"), ("d_aggr", "aggregate d_S"), ("d_overall", "overall d")):
        fig.add_trace(
            go.Violin(
                x=pairs["condition"],
                y=pairs[column],
                name=name,
                box_visible=True,
                meanline_visible=True,
                spanmode="hard",
            )
        )
    fig.update_layout(violinmode="group", title="Likert ratings per condition", yaxis_title="Likert (1 = very similar)")
    return fig


def coefficient_figure(result: PipelineResult) -> go.Figure:
    """Eq. 5-6 coefficients with 95% CIs (participant-clustered SEs) per condition."""
    t5 = result.table5
    rows = t5[
        (t5["se"] == "clustered") & t5["term"].isin(["d_aggr", "d_traj"]) & ~t5["model"].str.startswith("moderation")
    ]
    fig = go.Figure()
    for (model, outcome), group in rows.groupby(["model", "outcome"]):
        fig.add_trace(
            go.Scatter(
                x=group["coef"],
                y=[f"{model} · {outcome} · {t}" for t in group["term"]],
                mode="markers",
                name=f"{model} ({outcome})",
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": group["ci_high"] - group["coef"],
                    "arrayminus": group["coef"] - group["ci_low"],
                },
            )
        )
    fig.update_layout(
        title="Regression coefficients with 95% CIs (clustered by participant)", xaxis_title="coefficient"
    )
    return fig


def bts_figure(bts: pd.DataFrame) -> go.Figure:
    """Histogram of participants' mean BTS scores."""
    fig = go.Figure(go.Histogram(x=bts["total"], nbinsx=30, name="BTS"))
    fig.update_layout(title="Participants' mean BTS score (binarised overall question)", xaxis_title="BTS score")
    return fig


def calibrations_table(result: PipelineResult) -> pd.DataFrame:
    """One row per condition: alpha, its CI and that CI's estimand, both CIs (``ci_participants_low``...,
    ``ci_stimuli_low``...), stimulus pairs, a1, a2, participants, resamples, seed, ``generalise``."""
    rows = []
    for c in result.calibrations:
        row = {k: v for k, v in c.__dict__.items() if k not in ("ci_participants", "ci_stimuli")}
        for kind in ("participants", "stimuli"):
            low, high = getattr(c, f"ci_{kind}")
            row |= {f"ci_{kind}_low": low, f"ci_{kind}_high": high}
        rows.append(row | {"ci": list(c.ci)})
    return pd.DataFrame(rows)


def report_tables(result: PipelineResult) -> dict[str, pd.DataFrame]:
    """The report's tables by file name (``calibrations`` first, then Tables 2-5 and factors)."""
    return {"calibrations": calibrations_table(result), **{name: getattr(result, name) for name in TABLES}}


def report_figures(result: PipelineResult, pairs: pd.DataFrame, bts: pd.DataFrame) -> list[go.Figure]:
    """Likert violins, regression coefficients, BTS histogram."""
    return [ratings_figure(pairs), coefficient_figure(result), bts_figure(bts)]


def sample_dict(result: PipelineResult) -> dict:
    """Who was analysed: included, dropped by reason, the option used and one sentence."""
    if result.sample is None:
        return {}
    return result.sample.as_dict() | {"sentence": result.sample.sentence()}


def results_dict(result: PipelineResult) -> dict:
    """results.json: seed, exclusions, sample (dropped participants by reason), the multiple-testing
    family, calibrations and every table as records."""
    return {
        "seed": result.seed,
        "exclusions": result.exclusions,
        "sample": sample_dict(result),
        "multiple_testing": {
            "family": FAMILY_NAME,
            "definition": HEADLINE_FAMILY_STIMULI if result.generalise == "stimuli" else HEADLINE_FAMILY,
            "method": FAMILY_METHOD,
        },
        "calibrations": [c.__dict__ | {"ci": list(c.ci)} for c in result.calibrations],
        **{name: json.loads(getattr(result, name).to_json(orient="records")) for name in TABLES},
    }
