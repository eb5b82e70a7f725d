"""fairness.relative_reports.rater_group_bars: the reports' bars per rater group with CIs (section figures)."""

import pandas as pd
import pytest

from fairness.relative_reports import rater_group_bars


def test_bars_per_rater_group_with_facets_ci_and_plain_labels():
    table = pd.DataFrame(
        {
            "measure": ["disagreement"] * 4 + ["predicted"] * 4,
            "subject_group": ["A", "B"] * 4,
            "rater_group": (["<i>judge</i>"] * 2 + ["lay & co"] * 2) * 2,
            "mean": [0.1, 0.2, 0.6, 0.7, 0.5, 0.5, 0.4, 0.6],
            "ci_low": [0.0, 0.1, 0.5, 0.6, 0.4, 0.4, 0.3, 0.5],
            "ci_high": [0.3, 0.3, 0.8, 0.8, 0.6, 0.7, 0.5, 0.7],
        }
    )
    fig = rater_group_bars(table, x="subject_group", y="mean", title="t", facets=("measure", "subject_attribute"))
    judge, lay = fig.data
    assert (judge.name, lay.name) == ("&lt;i&gt;judge&lt;/i&gt;", "lay &amp; co")  # text, not Plotly markup
    assert [list(level) for level in judge.x] == [
        ["disagreement", "disagreement", "predicted", "predicted"],
        ["A", "B"] * 2,
    ]
    assert judge.error_y.array == pytest.approx([0.2, 0.1, 0.1, 0.2])
    assert judge.error_y.arrayminus == pytest.approx([0.1, 0.1, 0.1, 0.1])
    # no rater groups and no CI: one unlabelled colour, no error bars; one measure: a flat axis
    single = rater_group_bars(table[["subject_group", "mean"]].head(2), x="subject_group", y="mean", title="t")
    assert len(single.data) == 1 and single.data[0].showlegend is False and single.data[0].error_y.array is None
    assert list(single.data[0].x) == ["A", "B"]
