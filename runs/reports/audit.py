"""The model audit's report (``audit_models``): what it contains and why, group metrics in Fairlearn's
vocabulary, what people said, and with effort series EaIF with equal and human-calibrated weights, parity,
EaGF; disagreement-derived notions and alpha from yes/no feedback."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.sensitivity import Sensitivity
from fairness.calibration import boundary_note
from fairness.model_audit import (
    AuditResult,
    audit_figures,
    audit_summary,
    audit_tables,
    group_metric_figures,
    human_tables,
)
from fairness.relative_reports import rater_group_bars
from runs.provenance import Provenance
from runs.report_explanations import (
    AUDIT,
)
from runs.report_format import (
    format_ci,
    format_estimate,
)
from runs.reports.base import (
    CI_LABEL,
    Section,
    add_sensitivity,
    figure_context,
    figure_sections,
    render_report,
    table_context,
    table_section,
    with_adjusted,
    write_csv,
    write_json,
)
from runs.reports.deviations import add_deviations

EAIF_COLUMNS = {
    "model": "Model",
    "weights": "Weights",
    "alpha": "alpha",
    "eaif": "EaIF",
    "ci": CI_LABEL,
    "violation_share": "Violating pairs (share)",
    "n_pairs": "Pairs",
    "method": "Method",
}
GROUP_METRIC_COLUMNS = {
    "model": "Model",
    "group_column": "Sensitive column",
    "metric": "Metric",
    "quantity": "Group / summary",
    "value": "Value",
    "ci": CI_LABEL,
    "n": "Subjects",
}
SUMMARY_QUANTITIES = ("overall", "difference", "ratio")  # the report's rows of the group metrics
# Each audit table (by its CSV's name; the disagreement calibration's paragraph) that prints an interval or a
# p-value -> the analysis.coverage.REGISTRY keys (simulation.coverage_studies) whose simulations measure them;
# () for those no registered simulation measures yet (tests/analysis/test_coverage_registry.py lists them).
AUDIT_PROCEDURES: dict[str, tuple[str, ...]] = {
    "group_metrics": (
        "group metric, overall accuracy",
        *(f"group metric {q}, {s}" for q in ("difference", "ratio") for s in ("no gap", "a gap")),
    ),
    "disagreement_notions": tuple(f"{n} gap, {s}" for n in ("CA", "AE", "EO") for s in ("no gap", "a gap")),
    "eaif": ("sampled EaIF, bernstein bound", "sampled EaIF, hoeffding bound"),  # exact rows have no interval
    "disagreement_calibration": ("disagreement calibration",),
    "human_metric_lipschitz": tuple(f"human-metric Lipschitz share, {kind}" for kind in ("comparable", "triplet")),
    "utility_agreement": ("utility agreement",),
    "tradeoff_scores": ("trade-off score differences",),
    "feature_importance": ("feature importance, weighted",),
}
WORST_COLUMNS = {"id_i": "Subject i", "id_j": "Subject j", "D": "D", "d": "d", "violation": "D - d"}
LIPSCHITZ_COLUMNS = {
    "model": "Model",
    "statistic": "Violating pairs (share)",
    "ci": CI_LABEL,
    "n_pairs": "Pairs",
    "L": "L",
    "eaif": "EaIF",
    "parity": "Parity (lowest)",
}
HUMAN_WORST_COLUMNS = {
    "id_i": "Subject i",
    "id_j": "Subject j",
    "score_difference": "|s_i - s_j|",
    "distance": "d_M",
    "excess": "Excess",
}
UTILITY_COLUMNS = {
    "model": "Model",
    "rater_group": "Rater group",
    "statistic": "Spearman rho",
    "ci": CI_LABEL,
    "n_raters": "Raters",
    "n_subjects": "Subjects",
}
TRADEOFF_COLUMNS = {
    "model": "Model",
    "rater_group": "Rater group",
    "score": "Score w . x",
    "difference": "Difference from the reference",
    "ci": CI_LABEL,
    "reference": "Reference model",
}
RELIANCE_COLUMNS = {
    "model": "Model",
    "rater_group": "Rater group",
    "reliance": "Reliance",
    "unfair_fraction": "Unfair fraction",
    "surrogate": "Surrogate",
    "surrogate_r2": "Surrogate R^2",
}
IMPORTANCE_COLUMNS = {
    "model": "Model",
    "rater_group": "Rater group",
    "feature": "Feature",
    "importance": "Importance",
    "unfair_share": "Judged unfair (share)",
    "ci_unfair": CI_LABEL,
    "weighted": "Weighted",
    "ci_weighted": CI_LABEL,
}


NOTION_COLUMNS = {
    "model": "Model",
    "group_column": "Groups",
    "notion": "Notion",
    "value": "Gap",
    "ci": CI_LABEL,
    "pvalue": "p (no gap)",
}


def _exact_without_ci(eaif: pd.DataFrame) -> pd.DataFrame:
    """Exact EaIF rows have no sampling error: their zero-width CI is left blank."""
    exact = eaif["method"] == "exact"
    return eaif.assign(ci_low=eaif["ci_low"].mask(exact), ci_high=eaif["ci_high"].mask(exact))


@dataclass(frozen=True)
class AuditReport:
    """A written audit report: its page and the results its results.json holds (plain JSON values)."""

    path: Path
    results: dict[str, Any]


def write_audit_report(
    result: AuditResult,
    out_dir: Path,
    *,
    title: str,
    provenance: Provenance | None = None,
    sensitivity: Sensitivity | None = None,
    deviations: dict | None = None,
) -> AuditReport:
    """A model audit: report.html, results.json, eaif.csv, parity.csv, eagf_bins.csv and, with
    feedback, disagreement_notions.csv; with ``sensitivity`` also its section and sensitivity.csv. Returns the
    page and the results written (the run stores them without reading the file back). A preregistered study's
    audit states first that it is not in the plan (``deviations``: ``runs.analysis_plan.exploratory_deviations``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in audit_tables(result).items():
        write_csv(frame, out_dir / f"{name}.csv")
    results = audit_summary(result)
    weights = ", ".join(f"{name} {format_estimate(alpha)}" for name, alpha in result.settings["weights"].items())
    intro = [f"{result.settings['n_subjects']} subjects." + (f" Effort weights alpha: {weights}." if weights else "")]
    sections = [
        Section(
            title="What this audit contains",
            explanation=AUDIT["contents"],
            paragraphs=[result.sections[name] for name in ("group_metrics", "human", "feedback", "effort")],
        ),
        table_section(
            "Group metrics (Fairlearn's vocabulary)",
            result.group_metrics[result.group_metrics["quantity"].isin(SUMMARY_QUANTITIES)],
            explanation=AUDIT["group_metrics"],
            csv="group_metrics.csv",
            columns=GROUP_METRIC_COLUMNS,
            estimate="value",
            notes=[
                "Overall, difference and ratio; each group's values with their CIs are in the figures below and "
                "group_metrics.csv."
            ],
        ),
    ]
    if result.human is not None:
        sections += human_sections(result)
    if result.effort_aware:
        sections += effort_sections(result)
    if result.notions is not None and len(result.notions):
        method = result.multiple_testing.get("method", "holm")
        sections.append(
            table_section(
                "Disagreement-derived notions (critic labels from yes/no feedback)",
                result.notions,
                explanation=AUDIT["notions"],
                csv="disagreement_notions.csv",
                columns=with_adjusted(NOTION_COLUMNS, result.notions, result.multiple_testing),
                estimate="value",
                notes=[
                    f"One family of tests per model (its notions); p adjusted within it ({method}) beside the raw p."
                ],
            )
        )
    figures = group_metric_figures(result)
    sections += figure_sections(figures, [AUDIT["group_metrics_figure"]] * len(figures))
    figures = audit_figures(result)
    cal = result.disagreement_calibration
    n_groups = len(figures) - 1 - (cal is not None)
    explanations = [AUDIT["eaif_figure"], *[AUDIT["eagf_figure"]] * n_groups, AUDIT["calibration_curve"]]
    sections += figure_sections(figures, explanations)
    add_sensitivity(sensitivity, out_dir, results=results, sections=sections, intro=intro)
    add_deviations(deviations, results=results, sections=sections, intro=intro)
    written = write_json(results, out_dir / "results.json")
    return AuditReport(render_report(out_dir, title, sections, intro=intro, provenance=provenance), written)


def effort_sections(result: AuditResult) -> list[Section]:
    """The effort-aware sections: EaIF, effort-unaware parity, the disagreement calibration, the worst pairs."""
    eaif = table_section(
        "Effort-aware individual fairness (Tables 1 and 7)",
        _exact_without_ci(result.eaif),
        explanation=AUDIT["eaif"],
        csv="eaif.csv",
        columns=EAIF_COLUMNS,
        estimate="eaif",
    )
    eaif.paragraphs = sampling_paragraphs(result)
    sections = [
        eaif,
        table_section(
            "Traditional (effort-unaware) demographic parity (Tables 6 and 8)",
            result.parity.rename_axis("model"),
            index=True,
            explanation=AUDIT["parity"],
            csv="parity.csv",
        ),
    ]
    cal = result.disagreement_calibration
    if cal is not None:
        sections.append(
            Section(
                title="Effort weight from disagreement feedback",
                explanation=AUDIT["disagreement_calibration"],
                paragraphs=[
                    f"alpha = {format_estimate(cal.alpha)}, {CI_LABEL} {format_ci(*cal.ci, cal.alpha)}; criterion: "
                    f"{cal.criterion}; {cal.n_subjects} subjects, {cal.n_participants} participants. Estimand: alpha "
                    f"{cal.estimand}.",
                    *[note for note in [boundary_note(cal.alpha, cal.ci)] if note],
                ],
            )
        )
    search = result.settings.get("worst_pairs", {})
    sections.append(
        Section(
            title="Worst pairs",
            explanation=AUDIT["worst"],
            paragraphs=[f"Searched: {search.get('statement') or search.get('search', 'exact over all pairs')}."],
            tables=[
                table_context(pairs.head(10), caption=f"Worst pairs: {model}", columns=WORST_COLUMNS)
                for model, pairs in result.worst.items()
            ],
        )
    )
    return sections


def sampling_paragraphs(result: AuditResult) -> list[str]:
    """What a sampled EaIF estimates and how sure it is (results.json's ``settings.pair_sampling`` and the rows'
    ``n_pairs``, ``half_width`` and violation-share interval); nothing when every EaIF is exact."""
    sampled = result.eaif[result.eaif["method"].str.startswith("sampled")] if result.effort_aware else None
    if sampled is None or not len(sampled):
        return []
    asked = result.settings["pair_sampling"]
    pairs = f"{asked['n_pairs']:,} uniform pairs of subjects per row (with replacement)"
    if asked["half_width"] is not None:
        pairs = (
            f"uniform pairs of subjects (with replacement) until the interval's half-width was at most "
            f"{asked['half_width']:g}, checked at {asked['n_pairs']:,} x 2^j pairs with a union bound (delta / 2^(j+1) "
            f"at check j), so that the interval where the draws stopped holds at {asked['level']:.0%} whatever the "
            f"data, up to {asked['max_pairs']:,} pairs"
        )
    rows = [
        f"{row.model}, {row.weights} weights: EaIF {row.eaif:.6f} [{row.ci_low:.6f}, {row.ci_high:.6f}] "
        f"(+/- {row.half_width:.2g}); violating pairs {row.violation_share:.6f} [{row.violation_share_ci_low:.6f}, "
        f"{row.violation_share_ci_high:.6f}]; {int(row.n_pairs):,} pairs"
        + (
            f", more than the {asked['half_width']:g} asked for: the cap of pairs was reached"
            if asked["half_width"] is not None and row.half_width > asked["half_width"]
            else ""
        )
        for row in sampled.itertuples()
    ]
    return [
        f"Above {result.settings['exact_limit']:,} subjects EaIF and its violation share are sampled. Estimand: "
        f"{asked['estimand']}. Draws: {pairs}. Interval: {asked['level']:.0%}, by the {asked['bound']} bound "
        f"({asked['assumptions']}).",
        "; ".join(rows) + ".",
    ]


# a table of what people said -> its figure: (x, y) columns and title ({L}: the audit's L), bars per rater group
HUMAN_FIGURES = {
    "human_metric_lipschitz": (
        "model",
        "statistic",
        "Pairs violating the human metric (L = {L:g}), per model",
    ),
    "utility_agreement": (
        "model",
        "statistic",
        "Spearman rho with the stakeholders' utility, per model",
    ),
    "unfair_feature_reliance": ("model", "reliance", "Reliance on features judged unfair, per model"),
    "tradeoff_scores": ("model", "difference", "Trade-off score minus the reference model's, per model"),
}
# a table of what people said (its CSV name) -> section title, columns shown, estimate column, its option
HUMAN_SECTIONS = {
    "human_metric_lipschitz": (
        "Individual fairness under the human metric",
        LIPSCHITZ_COLUMNS,
        "statistic",
        "--metric-from",
    ),
    "utility_agreement": ("Agreement with the stakeholders' utility", UTILITY_COLUMNS, "statistic", "--utility-from"),
    "tradeoff_scores": (
        "Models scored by the stakeholders' trade-off weights",
        TRADEOFF_COLUMNS,
        "difference",
        "--tradeoff-from",
    ),
    "unfair_feature_reliance": ("Reliance on features judged unfair", RELIANCE_COLUMNS, "reliance", "--features-from"),
    "feature_importance": (
        "Permutation importance and feature-fairness judgements",
        IMPORTANCE_COLUMNS,
        "weighted",
        "--features-from",
    ),
}


SURROGATE_NOTES = {  # under the reliance table: which surrogate (--surrogate) and what its R^2 is
    "linear": "Surrogate: a linear regression of each model's scores on the judged features (in-sample R^2); "
    "when R^2 is low, --surrogate forest follows thresholds and interactions.",
    "forest": "Surrogate: a random forest of each model's scores on the judged features (--surrogate forest); R^2 "
    "is out of bag (each subject predicted by the trees that did not see it).",
}


def lipschitz_sentence(L: float) -> str:
    """What the audit's L means, printed under the share of violating pairs."""
    return (
        f"L = {L:g}: a pair violates when its scores differ by more than {L:g} score units per unit of human-metric "
        f"distance (|s_i - s_j| > {L:g} d_M); a larger L tolerates larger score differences, so the share cannot grow "
        "with L."
    )


def beside_human_metric(result: AuditResult, models: pd.Series) -> dict[str, pd.Series]:
    """EaIF (the last effort weight; NaN without effort) and the lowest parity over the group columns (the
    effort-unaware parity of mean scores with effort, else the selection rates' ratio) of each of ``models``."""
    if result.effort_aware:
        last = list(result.settings["weights"])[-1]
        eaif = result.eaif[result.eaif["weights"] == last].set_index("model")["eaif"]
        parity = result.parity.min(axis=1) if result.parity.shape[1] else pd.Series(dtype=float)
    else:
        table = result.group_metrics
        ratios = table[(table["metric"] == "selection_rate") & (table["quantity"] == "ratio")]
        eaif, parity = pd.Series(dtype=float), ratios.groupby("model")["value"].min()
    return {"eaif": models.map(eaif).astype(float), "parity": models.map(parity).astype(float)}


def human_sections(result: AuditResult) -> list[Section]:
    """The sections of what people said: individual fairness under the human metric beside EaIF (the last
    effort weight) and the lowest parity over the group columns, with its worst pairs; the agreement with the
    stakeholders' utility; the reliance on features judged unfair."""
    human = result.human
    assert human is not None
    tables = human_tables(human)
    sections = []
    for name, (title, columns, estimate, option) in HUMAN_SECTIONS.items():
        if name not in tables:
            continue
        frame = tables[name]
        if name == "human_metric_lipschitz":
            frame = frame.assign(**beside_human_metric(result, frame["model"]))
        notes = [f"From {human.sources[option]}."]
        if name == "human_metric_lipschitz":
            notes += [lipschitz_sentence(frame["L"].iloc[0])]
        if name == "unfair_feature_reliance" and human.reliance is not None:
            notes += [SURROGATE_NOTES[human.reliance.surrogate]]
        section = table_section(
            title, frame, explanation=AUDIT[name], csv=f"{name}.csv", columns=columns, estimate=estimate, notes=notes
        )
        if name in HUMAN_FIGURES and len(frame):
            x, y, heading = HUMAN_FIGURES[name]
            heading = heading.format(L=frame["L"].iloc[0]) if "L" in frame else heading
            section.figure = figure_context(rater_group_bars(frame, x=x, y=y, title=heading, labels=columns))
        sections.append(section)
        if name == "human_metric_lipschitz" and human.worst is not None:
            sections.append(
                Section(
                    title="Worst pairs under the human metric",
                    explanation=AUDIT["human_metric_worst"],
                    csv="human_metric_worst_pairs.csv",
                    tables=[
                        table_context(pairs.head(10), caption=f"Worst pairs: {model}", columns=HUMAN_WORST_COLUMNS)
                        for model, pairs in human.worst.items()
                        if len(pairs)
                    ],
                    empty="No pair of any model violates the condition.",
                )
            )
    return sections
