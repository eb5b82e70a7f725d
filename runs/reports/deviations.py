"""A preregistered study's deviations from its plan in a report (``runs.analysis_plan``): the opening sentence,
the table with Willroth & Atherton's fields, and ``results.json``'s ``deviations``."""

import pandas as pd

from runs.report_explanations import DESIGN
from runs.reports.base import Section, table_section


def deviations_sentence(deviations: dict) -> str:
    registered = f"preregistered on {deviations['registered_at'][:10]} (version {deviations['registered_version']})"
    if deviations.get("participants_before"):
        registered += f", after {deviations['participants_before']} participants had answered"
    if deviations["follows_plan"]:
        planned = deviations["planned_analysis"]
        return f"This analysis follows the plan the study was {registered}: the planned analysis {planned!r}."
    kind = (
        "an exploratory analysis"
        if not deviations["planned_analysis"]
        else f"the planned analysis {deviations['planned_analysis']!r}"
    )
    count = len(deviations["deviations"])
    return f"The study was {registered}; this is {kind} with {count} deviation(s) from the plan (below)."


def deviations_section(deviations: dict) -> Section:
    """The deviations from the registered plan as Willroth & Atherton's table (what, when, why, type, impact)."""
    frame = pd.DataFrame(deviations["deviations"], columns=["what", "when", "why", "type", "impact"])
    return table_section(
        "Deviations from the preregistered plan",
        frame,
        empty="None: the analysis follows the registered plan.",
        explanation=DESIGN["deviations"],
        columns={"what": "What", "when": "When", "why": "Why", "type": "Type", "impact": "Impact"},
        notes=[deviations_sentence(deviations)],
    )


def add_deviations(deviations: dict | None, *, results: dict, sections: list, intro: list) -> None:
    """``results["deviations"]`` (None: the study is not registered) and, for a registered study, the sentence
    first in the introduction and the table first among the sections."""
    results["deviations"] = deviations
    if deviations is not None:
        sections.insert(0, deviations_section(deviations))
        intro.insert(0, deviations_sentence(deviations))
