"""The situation-testing reports: ST / CST / CF on a CSV (``situation_testing``) and the CST
paper's law-school experiment (``law_school_experiment``)."""

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from django.utils.text import slugify

from fairness import law_school
from fairness.relative_reports import counts_figure, flagged_cases, st_results
from fairness.situation_testing import SituationTestingResult
from runs.provenance import Provenance
from runs.report_explanations import (
    SITUATION_TESTING,
    ST_METHODS,
)
from runs.report_format import format_estimate, format_pvalue
from runs.reports.base import (
    ADJUSTMENT_NAMES,
    Case,
    Section,
    _heading,
    figure_sections,
    render_report,
    table_context,
    table_section,
    write_csv,
    write_json,
)

# The CSVs of a situation-testing report that print p-values, and the keys of analysis.coverage.REGISTRY whose
# simulations measure their size (counts.csv has none: it counts the tests' decisions)
ST_PROCEDURES: dict[str, tuple[str, ...]] = {
    "individuals": (
        "situation testing exact test, k = 5",
        "situation testing exact test, k = 15",
        "situation testing exact family, Holm",
    ),
}


def flagged_section(
    result: SituationTestingResult, *, k: int, method: str, data: pd.DataFrame, title: str, limit: int = 200
) -> Section:
    """Flagged complainants of one k and method, each expandable to its control and test groups: Δp, the paper's
    Wald rule and the exact test's p-value, raw and adjusted over the method's and k's complainants."""
    adjusted = ADJUSTMENT_NAMES.get(result.multiple_testing.get("method", ""), "adjusted")
    cases = []
    for case in flagged_cases(result, k=k, method=method, data=data, limit=limit):
        significant = ", significant by the Wald rule" if case.significant else ""
        cases.append(
            Case(
                id=f"{slugify(title)[:30]}-c{case.complainant}",
                summary=f"complainant {case.complainant}: p_c = {format_estimate(case.p_c)}, "
                f"p_t = {format_estimate(case.p_t)}, Δp = {format_estimate(case.delta)}{significant}; "
                f"exact p = {format_pvalue(case.pvalue)}, {adjusted} {format_pvalue(case.pvalue_adjusted)}",
                tables=[
                    table_context(case.row, index=True, caption="Complainant"),
                    table_context(case.control, index=True, caption=f"Control group ({len(case.control)})"),
                    table_context(case.test, index=True, caption=f"Test group ({len(case.test)})"),
                ],
            )
        )
    return Section(title=title, cases=cases, empty="No complainant flagged.", explanation=SITUATION_TESTING["flagged"])


def _counts_sections(result: SituationTestingResult, *, name: str = "", csv: str) -> list[Section]:
    """The counts table and its figure (``name``: the attribute tested, as a heading prefix)."""
    prefix = f"{_heading(name)}: " if name else ""
    title = f"{prefix}complainants flagged per k"
    fig = counts_figure(result)
    fig.update_layout(title=f"{prefix}flags against k, by method" if prefix else "Flags against k, by method")
    return [
        table_section(title[:1].upper() + title[1:], result.counts, explanation=SITUATION_TESTING["counts"], csv=csv),
        *figure_sections([fig], [SITUATION_TESTING["counts_figure"]]),
    ]


def write_st_report(
    result: SituationTestingResult,
    data: pd.DataFrame,
    out_dir: Path,
    *,
    title: str,
    method: str | None = None,
    k: int | None = None,
    settings: dict | None = None,
    provenance: Provenance | None = None,
) -> Path:
    """Situation testing: report.html, results.json, counts.csv and individuals.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(result.counts, out_dir / "counts.csv")
    write_csv(result.individuals, out_dir / "individuals.csv")
    write_json(st_results(result, settings), out_dir / "results.json")
    method = method or ("CSTwo" if "CSTwo" in result.counts else "ST")
    k = k or int(result.counts["k"].min())
    sections = [
        *_counts_sections(result, csv="counts.csv"),
        flagged_section(result, k=k, method=method, data=data, title=f"Flagged complainants ({method}, k = {k})"),
    ]
    methods = {name: text for name, text in ST_METHODS.items() if name in result.counts}
    return render_report(out_dir, title, sections, provenance=provenance, methods=methods)


def write_law_school_report(
    results: law_school.LawSchoolResults,
    data: pd.DataFrame,
    out_dir: Path,
    *,
    k: Iterable[int],
    provenance: Provenance | None = None,
) -> Path:
    """The CST paper's LSAC experiment (``fairness.law_school.run``): counts per attribute,
    flagged complainants (CST without centres, smallest k), multiple discrimination, and this run's
    counts minus the published Tables 10-13."""
    out_dir.mkdir(parents=True, exist_ok=True)
    k_min = min(k)
    sections: list[Section] = []
    for name in ("gender", "race", "intersectional"):
        res = getattr(results, name)
        write_csv(res.counts, out_dir / f"counts_{name}.csv")
        sections += _counts_sections(res, name=name, csv=f"counts_{name}.csv")
        sections.append(
            flagged_section(
                res,
                k=k_min,
                method="CSTwo",
                data=data,
                limit=50,
                title=f"{_heading(name)}: flagged by CST without centres (k = {k_min})",
            )
        )
    write_csv(results.multiple, out_dir / "counts_multiple.csv")
    sections.append(
        table_section(
            "Multiple discrimination (gender and race, each at alpha / 2)",
            results.multiple,
            explanation=SITUATION_TESTING["multiple"],
            csv="counts_multiple.csv",
        )
    )
    sections.append(_published_section(results))
    protected = "; ".join(f"{key} {value}" for key, value in results.n_protected.items())
    if results.mode == "reference":
        source = (
            "Mode: reference mode (the authors' code and their counterfactual files cf_LawSchool_lev3_do*.csv; "
            "z-scored distances; the race distance also counts sex; the intersectional counterfactual from one "
            "merged node female_nonwhite)."
        )
    else:
        equations = "; ".join(f"{node} <- {' + '.join(parents)}" for node, parents in law_school.DAG.items())
        source = (
            f"Mode: paper (the paper's equations). Counterfactuals: linear additive-noise SCM {equations}, fitted by "
            "least squares. The last section compares the counts with the published Tables 10-13."
        )
    intro = [
        f"Protected individuals: {protected}. Decision: admitted when 0.6 UGPA + 0.4 LSAT >= {law_school.MIN_SCORE}. "
        f"{source}"
    ]
    return render_report(
        out_dir,
        "Counterfactual situation testing: LSAC law-school data",
        sections,
        intro=intro,
        provenance=provenance,
        methods=ST_METHODS,
    )


LAW_SCHOOL_DIFFERENCES = [
    "Why the paper mode differs from the published tables (each cause measured by changing it alone):",
    "1. Distance scaling (Eq. 4). The paper mode divides each feature difference by the feature's range in the "
    "factual data. The authors' code z-scores LSAT and UGPA instead, which weighs the two features differently: "
    "this alone makes every ST difference except race's (gender ST at k = 15: 28 here, 77 published). It also "
    "z-scores the counterfactual table with its own mean and standard deviation, which moves each counterfactual "
    "centre part of the way back to its factual position: most CST differences come from this (one scaling for "
    "both tables would give gender CST without centres 196 at k = 15 from the authors' own files; published 78).",
    "2. SCM fit. The authors round LSAT before the least-squares fit, round the counterfactuals to 3 decimals and "
    "clip them to [10, 48] and [0, 4]; the paper mode does none of this (race CF 232 instead of 231, and a few "
    "CST cases).",
    "3. Race distance. The authors' race test also counts sex in the distance (0 if equal, 1 if not); the paper "
    "mode uses LSAT and UGPA only (race ST at k = 15: 28 here, 33 with sex).",
    "4. Intersectional node. The authors merge race and sex into one node female_nonwhite, so their "
    "do(female_nonwhite := 0) moves only non-white women; the paper mode intervenes do(sex := Male, race := "
    "White) on the two-node DAG, which also moves white women and non-white men (CF 131 instead of 113).",
    "Their rounding of the Wald rule to 3 decimals and their control group (the k + 1 nearest protected "
    "individuals less the complainant) change one cell only (race ST significant at k = 250). "
    "law_school_experiment --mode reference reproduces every cell of Tables 10-13.",
]


def _published_section(results: law_school.LawSchoolResults) -> Section:
    """This run's counts minus the paper's Tables 10-13, for the k values both have."""
    section = Section(
        title="Comparison with the published tables (CST paper, Tables 10-13)",
        explanation=SITUATION_TESTING["published"],
    )
    section.paragraphs.append(
        "The published counts are for all 21,790 students of clean_LawSchool.csv, alpha = 0.05 (multiple: alpha / 2 "
        "per attribute), tau = 0; on other data the counts differ anyway."
    )
    names = ("gender", "race", "multiple", "intersectional")
    diffs = {
        name: law_school.differences(results.multiple if name == "multiple" else getattr(results, name).counts, name)
        for name in names
    }
    compared = diffs["multiple"]["k"].tolist()
    if not compared:
        section.paragraphs.append(f"None of the k values of this run is one the paper reports {law_school.K_LIST}.")
    elif not any((diff.drop(columns="k") != 0).any().any() for diff in diffs.values()):
        section.paragraphs.append(
            f"Every count of this run (k = {', '.join(map(str, compared))}) equals the published one."
        )
    else:
        if results.mode == "paper":
            section.paragraphs += LAW_SCHOOL_DIFFERENCES
        for name, diff in diffs.items():
            caption = (
                f"{_heading(name)}: this run minus {law_school.PUBLISHED_TABLES[name][0]} (0 = the published count)"
            )
            section.tables.append(table_context(diff, caption=caption))
    return section
