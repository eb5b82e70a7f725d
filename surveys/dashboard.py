"""Figures for the study dashboard, computed from the participants export table."""

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go


@dataclass(frozen=True)
class DashboardSummary:
    total: int
    by_condition_status: pd.DataFrame
    completion_rate: float | None
    exclusion_rate: float | None
    median_minutes: float | None
    arrivals_figure_json: str


def summarise(participants: pd.DataFrame) -> DashboardSummary:
    """Counts per condition and status, completion and exclusion rates, median time, arrivals chart.

    completion rate = completed / consented; exclusion rate = excluded / completed; median time over
    completed participants (consent to completion).
    """
    table = (
        participants.assign(condition=participants["condition"].replace("", "(none)")).pivot_table(
            index="condition", columns="status", values="participant_id", aggfunc="count", fill_value=0
        )
        if len(participants)
        else pd.DataFrame()
    )
    consented = participants[participants["status"].isin(["active", "completed"])]
    completed = participants[participants["status"] == "completed"]
    figure = go.Figure()
    if len(participants):
        arrivals = participants.assign(arrived=pd.to_datetime(participants["arrived_at"], utc=True)).sort_values(
            "arrived"
        )
        for condition, group in arrivals.groupby("condition"):
            figure.add_trace(
                go.Scatter(
                    x=group["arrived"],
                    y=list(range(1, len(group) + 1)),
                    mode="lines",
                    line={"shape": "hv"},
                    name=condition or "(no condition yet)",
                )
            )
    figure.update_layout(
        title="Arrivals over time (cumulative, by condition)",
        xaxis_title="Arrival time (UTC)",
        yaxis_title="Participants",
        margin={"l": 50, "r": 10, "t": 40, "b": 40},
        height=320,
    )
    return DashboardSummary(
        total=len(participants),
        by_condition_status=table,
        completion_rate=len(completed) / len(consented) if len(consented) else None,
        exclusion_rate=completed["excluded"].mean() if len(completed) else None,
        median_minutes=completed["duration_seconds"].median() / 60 if len(completed) else None,
        arrivals_figure_json=figure.to_json(),
    )
