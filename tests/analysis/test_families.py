"""Families of tests and their adjustment (analysis.families): Holm and Benjamini-Hochberg against the
definitions worked by hand and the families a table declares (the family-wise error of null studies is
measured by the coverage registry: ``block family, Holm``)."""

import numpy as np
import pandas as pd
import pytest

from analysis.families import adjust, adjust_table, adjust_tied


def holm_by_hand(p):
    """Holm (1979): sorted p_(1) <= ... <= p_(m), adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))."""
    p = np.asarray(p, float)
    order = np.argsort(p)
    out = np.empty_like(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def bh_by_hand(p):
    """Benjamini & Hochberg (1995): adjusted p_(i) = min_{j >= i} min(1, m p_(j) / j)."""
    p = np.asarray(p, float)
    order = np.argsort(p)
    out = np.empty_like(p)
    running = 1.0
    for rank in range(len(p) - 1, -1, -1):
        i = order[rank]
        running = min(running, len(p) * p[i] / (rank + 1))
        out[i] = running
    return out


P = [0.01, 0.04, 0.03, 0.005, 0.2]


def test_holm_and_bh_equal_their_definitions():
    assert adjust(P, "holm") == pytest.approx(holm_by_hand(P))
    assert adjust(P, "bh") == pytest.approx(bh_by_hand(P))
    assert adjust(P, "none") == pytest.approx(P)
    assert adjust(P, "holm").tolist() == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.2])
    with np.errstate(invalid="ignore"):
        assert np.isnan(adjust([0.01, np.nan], "holm")[1]) and adjust([0.01, np.nan], "holm")[0] == 0.01
    with pytest.raises(ValueError, match="holm, bh, none"):
        adjust(P, "bonferonni")


@pytest.mark.parametrize("method", ["holm", "bh", "none"])
@pytest.mark.parametrize("distinct", [40, 5_000], ids=["many ties", "few ties"])
def test_the_tie_aware_adjustment_is_statsmodels_to_the_last_bit(method, distinct):
    """adjust_tied (once per distinct p-value) gives statsmodels' floats exactly, with runs of equal p-values,
    values beyond 1 after the adjustment and NaN (left out of the family); and the definitions by hand."""
    rng = np.random.default_rng(distinct)
    levels = np.concatenate([rng.random(distinct) ** 3, [1.0, 0.0]])
    p = rng.choice(levels, size=20_000)
    p[rng.choice(len(p), 50, replace=False)] = np.nan
    with np.errstate(invalid="ignore"):
        expected = adjust(p, method)
    assert np.array_equal(adjust_tied(p, method), expected, equal_nan=True)
    kept = ~np.isnan(p)
    by_hand = {"holm": holm_by_hand, "bh": bh_by_hand, "none": np.asarray}[method](p[kept][:2_000])
    assert adjust_tied(p[kept][:2_000], method) == pytest.approx(np.minimum(by_hand, 1.0), rel=1e-12)
    with pytest.raises(ValueError, match="holm, bh, none"):
        adjust_tied(p, "bonferonni")


def test_a_table_declares_its_families_and_keeps_the_raw_p():
    frame = pd.DataFrame(
        {"measure": ["CA", "CA", "AE"], "pvalue": [0.01, 0.02, 0.5], "weighted_pvalue": [0.3, 0.01, 0.02]}
    )
    table, families = adjust_table(frame, prefix="b1/tests", method="holm")
    assert table["test_id"].tolist() == ["b1/tests/0", "b1/tests/1", "b1/tests/2"]
    assert table["pvalue"].tolist() == [0.01, 0.02, 0.5]  # the raw p stays beside the adjusted one
    assert table["pvalue_adjusted"].tolist() == pytest.approx(holm_by_hand([0.01, 0.02, 0.5]))
    assert list(table.columns).index("pvalue_adjusted") == list(table.columns).index("pvalue") + 1
    assert families == {"b1/tests/pvalue": ["b1/tests/0", "b1/tests/1", "b1/tests/2"]} | {
        "b1/tests/weighted_pvalue": ["b1/tests/0", "b1/tests/1", "b1/tests/2"]
    }
    split, families = adjust_table(frame, prefix="b1/pairwise", method="bh", split=["measure"])
    assert split["pvalue_adjusted"].tolist() == pytest.approx([0.02, 0.02, 0.5])  # BH within CA, AE alone
    assert set(families) == {f"b1/pairwise/{c}/{m}" for c in ("pvalue", "weighted_pvalue") for m in ("CA", "AE")}
