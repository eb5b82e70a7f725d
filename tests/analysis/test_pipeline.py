"""Proof that the pipeline recovers the truth (issue: 150 simulated participants, a1 = .32, a2 = .61)."""

import json

import pytest

from analysis.pipeline import alpha_from, run_pipeline, stars
from participation.simulate import simulate_participants
from research.export import export_tables
from simulation.effort import GenerativeModel
from studies.services import study_load
from tests.conftest import DEMO_FILE


def test_paper_normalisation():
    """0.6114 / (0.6114 + 0.3182) = 0.6577 (paper, 'Computing EaIF')."""
    assert alpha_from(0.3182, 0.6114) == pytest.approx(0.6577, abs=5e-5)
    assert alpha_from(0.3580, 0.5454) == pytest.approx(0.6037, abs=5e-5)  # CLUE, Table 7's 0.6037


def test_stars():
    assert [stars(p) for p in (0.0001, 0.005, 0.03, 0.2)] == ["***", "**", "*", ""]


@pytest.fixture
def study_export(db):
    study_load(spec=json.loads(DEMO_FILE.read_text()))
    simulate_participants("effort-demo", n=150, seed=1, model=GenerativeModel(a1=0.32, a2=0.61))
    return export_tables("effort-demo")


@pytest.mark.slow
def test_pipeline_intervals_contain_the_generating_weights(study_export):
    result = run_pipeline(study_export.pairs, study_export.participants, seed=1, n_resamples=1000)
    assert result.exclusions["excluded"] >= 0 and result.exclusions["included"] > 100
    t5 = result.table5
    for cond in ("arrests", "income"):
        rows = t5[(t5["model"] == cond) & (t5["outcome"] == "d") & (t5["se"] == "clustered")].set_index("term")
        assert rows.loc["d_aggr", "ci_low"] <= 0.32 <= rows.loc["d_aggr", "ci_high"]
        assert rows.loc["d_traj", "ci_low"] <= 0.61 <= rows.loc["d_traj", "ci_high"]
    for cal in result.calibrations:
        assert cal.ci[0] <= 0.61 / 0.93 <= cal.ci[1]
    # trajectory beats aggregate, as in the paper
    t3 = result.table3
    assert (t3["statistic"] > 0).all() and (t3["pvalue_bonferroni"] < 0.05).all()
    assert set(t3["convention"]) == {"paper", "fieller"} and len(t3) == 16
    assert t3["label"].str.len().gt(0).all()
    assert (result.table4["ci_low"] > 0).all()
    assert set(result.table2["coefficient"]) == {
        "r_aggr_input",
        "r_traj_input",
        "r_aggr_traj",
        "r_aggr_output",
        "r_traj_output",
    }
    assert (result.factor_shares["trajectory"] > result.factor_shares["aggregate"]).all()
    # participant-level headline: every family test rejects (trajectory weighs more), Holm within the family
    head = result.participant_level
    family = head[head["in_family"] & (head["hypothesis"] != "a4 = a5 = 0")]
    assert len(family) == 12 and (family["pvalue_holm"] < 0.05).all()
    contrast = head[(head["hypothesis"] == "a2 = a1") & (head["outcome"] == "d")]
    assert ((contrast["ci_low"] <= 0.29) & (0.29 <= contrast["ci_high"])).all()  # a2 - a1 = .61 - .32
    mixed = result.mixed_models.set_index(["model", "outcome", "term"])
    for cond in ("arrests", "income"):
        row = mixed.loc[(cond, "d", "a2 - a1 (d_traj - d_aggr)")]
        assert row["ci_low"] <= 0.29 <= row["ci_high"] and row["n_stimuli"] == 12
    assert (result.effect_sizes["cohen_d"] > 0).all() and (result.effect_sizes["cohen_d_ci_low"] > 0).all()
    assert len(result.rm_correlations) == 10 and result.rm_correlations["r"].notna().all()
    assert set(result.icc["type"]) >= {"ICC(A,1)", "ICC(A,k)"} and (result.icc["n_targets"] == 12).all()
    assert result.sample.included == result.exclusions["included"]


# Table 3 from the paper's own Table 2 (effort-aware fairness paper, Appendix F, Tables 2 and 3;
# n = rated pairs: 900 CLUE, 888 SHED).
PAPER_TABLE2 = {
    "CLUE": (
        900,
        {"traj_input": 0.7056, "aggr_input": 0.5022, "traj_aggr": 0.1670, "traj_output": 0.4218, "aggr_output": 0.2089},
    ),
    "SHED": (
        888,
        {"traj_input": 0.7881, "aggr_input": 0.6547, "traj_aggr": 0.4277, "traj_output": 0.4986, "aggr_output": 0.2507},
    ),
}
PAPER_TABLE3 = {
    ("CLUE", "hotelling", "input"): 7.9758,
    ("CLUE", "hotelling", "output"): 5.5161,
    ("CLUE", "steiger", "input"): 6.9077,
    ("CLUE", "steiger", "output"): 5.3461,
    ("SHED", "hotelling", "input"): 7.3360,
    ("SHED", "hotelling", "output"): 7.9612,
    ("SHED", "steiger", "input"): 6.5541,
    ("SHED", "steiger", "output"): 7.6466,
}
ROUNDING = 0.00005  # Table 2 prints r to 4 decimals, Table 3 prints statistics to 4 decimals


def _rounding_bound(correlations, n, test, comparison):
    """Worst-case change of the statistic when each r moves by up to ROUNDING (first-order, by
    central differences), plus Table 3's own rounding: how far 'within rounding' may be."""
    from analysis.pipeline import table3_from_correlations

    def stat(values):
        t = table3_from_correlations(values, n).set_index(["test", "comparison"])
        return t.loc[(test, comparison), "statistic"]

    bound = ROUNDING
    for key in correlations:
        up, down = dict(correlations), dict(correlations)
        up[key] += ROUNDING
        down[key] -= ROUNDING
        bound += abs(stat(up) - stat(down)) / 2
    return bound


@pytest.mark.parametrize("key,expected", sorted(PAPER_TABLE3.items()))
def test_table3_paper_convention_reproduces_the_paper(key, expected):
    """The tolerance is the rounding error propagated from Table 2's 4-decimal r (each r is only
    known to +-0.00005; the statistics move by ~30-40 per unit r at n ~ 900) plus Table 3's own
    rounding: about 0.005. The largest gap (SHED Hotelling input, 0.0036) is inside it."""
    from analysis.pipeline import table3_from_correlations

    condition, test, comparison = key
    n, correlations = PAPER_TABLE2[condition]
    table = table3_from_correlations(correlations, n, convention="paper")
    assert list(table.columns[:5]) == ["test", "comparison", "statistic", "pvalue", "pvalue_bonferroni"]
    got = table.set_index(["test", "comparison"]).loc[(test, comparison), "statistic"]
    bound = _rounding_bound(correlations, n, test, comparison)
    assert bound < 0.01
    assert got == pytest.approx(expected, abs=bound)


def test_table3_conventions_on_published_test_vectors():
    """Steiger (1980) Z1* (.4, .5, .1, 103) = -0.8887 and Hotelling (1940) t (.5, .2, .3, 50) = 2.01
    (../shared/test-vectors.md): the paper convention gives Hotelling's t unadjusted, the fieller
    convention divides both statistics by sqrt(1.06)."""
    from analysis.pipeline import table3_from_correlations

    def table(r_jk, r_jh, r_kh, n, convention):
        r = {"traj_input": r_jk, "aggr_input": r_jh, "traj_aggr": r_kh, "traj_output": r_jk, "aggr_output": r_jh}
        return table3_from_correlations(r, n, convention=convention).set_index(["test", "comparison"])["statistic"]

    assert table(0.4, 0.5, 0.1, 103, "fieller")[("steiger", "input")] == pytest.approx(-0.8887 / 1.06**0.5, abs=1e-4)
    assert table(0.5, 0.2, 0.3, 50, "paper")[("hotelling", "input")] == pytest.approx(2.01, abs=0.005)
    assert table(0.5, 0.2, 0.3, 50, "fieller")[("hotelling", "input")] == pytest.approx(2.01 / 1.06**0.5, abs=0.005)
    n, r = PAPER_TABLE2["CLUE"]
    paper = table3_from_correlations(r, n).set_index(["test", "comparison"])
    fieller = table3_from_correlations(r, n, convention="fieller").set_index(["test", "comparison"])
    # both conventions say which statistic they are
    assert paper["label"].str.contains("paper").all() and fieller["label"].str.contains("1.06").all()
    assert (fieller["pvalue_bonferroni"] == (fieller["pvalue"] * 4).clip(upper=1)).all()


def test_table3_rejects_unknown_convention_and_missing_correlations():
    from analysis.pipeline import table3_from_correlations

    n, r = PAPER_TABLE2["SHED"]
    with pytest.raises(ValueError, match="convention"):
        table3_from_correlations(r, n, convention="pearson")
    with pytest.raises(ValueError, match="traj_aggr"):
        table3_from_correlations({k: v for k, v in r.items() if k != "traj_aggr"}, n)


def test_generalise_chooses_the_calibrations_ci_and_needs_stimuli(demo_spec):
    """Both CIs are computed either way; ``generalise="stimuli"`` only chooses which is the calibration's."""
    from analysis.pipeline import ESTIMAND_POPULATION, ESTIMAND_STIMULI
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    pairs = simulate_pairs(stored_file(demo_spec)[0], 24, seed=4).assign(reference="K")
    fixed = run_pipeline(pairs, seed=2, n_resamples=200, mixed_models=False)
    general = run_pipeline(pairs, seed=2, n_resamples=200, mixed_models=False, generalise="stimuli")
    for f, g in zip(fixed.calibrations, general.calibrations, strict=True):
        assert (f.ci_participants, f.ci_stimuli) == (g.ci_participants, g.ci_stimuli) and f.n_stimuli == 12
        assert f.ci == f.ci_participants and g.ci == g.ci_stimuli and f.generalise is None
        assert f.estimand == ESTIMAND_STIMULI.format(n=12) and g.estimand == ESTIMAND_POPULATION.format(n=12)
    with pytest.raises(ValueError, match="generalising over stimuli needs the pairs table's columns"):
        run_pipeline(pairs.drop(columns="reference"), seed=2, n_resamples=50, mixed_models=False, generalise="stimuli")
    with pytest.raises(ValueError, match="generalise must be one of"):
        run_pipeline(pairs, seed=2, n_resamples=50, mixed_models=False, generalise="population")


def test_moderation_codes_the_undesirable_condition_else_the_first(demo_spec):
    """Eq. 7-8's C = 1 marks the condition whose effort feature is undesirable (the paper's CLUE); pairs that do
    not say which (no ``desirable`` column) code the first condition, rather than no condition at all (an
    all-zero C, whose interactions cannot be estimated)."""
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    pairs = simulate_pairs(stored_file(demo_spec)[0], 24, seed=4)
    conditions = list(dict.fromkeys(pairs["condition"]))
    assert len(conditions) == 2
    for frame, coded in (
        (pairs.assign(desirable=(pairs["condition"] == conditions[0]).astype(int)), conditions[1]),
        (pairs.drop(columns="desirable", errors="ignore"), conditions[0]),
    ):
        result = run_pipeline(frame, seed=2, n_resamples=50, mixed_models=False)
        moderation = result.participant_level[result.participant_level["model"].str.startswith("moderation")]
        assert set(moderation["model"]) == {f"moderation (C = {coded})"}
        assert moderation["statistic"].notna().all() and moderation["pvalue"].between(0, 1).all()


def test_a_condition_with_too_few_participants_is_refused_with_its_count(demo_spec):
    """A condition with one participant left (cluster-robust SEs over one cluster divide by zero in statsmodels) is
    a ValueError that names it, not a ZeroDivisionError from inside the regression."""
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    pairs = simulate_pairs(stored_file(demo_spec)[0], 24, seed=4)
    income = pairs.loc[pairs["condition"] == "income", "participant_id"].unique()
    lonely = pairs[(pairs["condition"] != "income") | (pairs["participant_id"] == income[0])]
    with pytest.raises(ValueError, match=r"too few participants with rated pairs in a condition .*1 in 'income'"):
        run_pipeline(lonely, seed=2, n_resamples=50, mixed_models=False)


def test_the_effect_size_table_keeps_its_columns_when_no_participant_can_be_fitted(demo_spec, tmp_path):
    """Participants who rated one pair each (as in tests/studies/format2_example.json) have no two-stage slopes (4
    pairs needed) and no repeated-measures correlation (2 needed): those rows say why and keep every column, and
    the report's sections are written (they read ``cohen_d_ci_low`` and ``r``: KeyErrors)."""
    from analysis.bts import participant_bts
    from runs.reports.effort import effort_sections
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    pairs = simulate_pairs(stored_file(demo_spec)[0], 24, seed=4)
    one = pairs.groupby("participant_id").head(1)
    result = run_pipeline(one, seed=2, n_resamples=50, mixed_models=False)
    effects, rm = result.effect_sizes, result.rm_correlations
    assert {"mean_difference", "cohen_d", "cohen_d_ci_low", "cohen_d_ci_high"} <= set(effects.columns)
    assert effects["cohen_d_ci_low"].isna().all() and rm["r"].isna().all()
    assert effects["note"].str.startswith("not computed: the two-stage test needs at least 3 participants").all()
    assert rm["note"].str.startswith("not computed: a repeated-measures correlation needs at least 3").all()
    bts = participant_bts(result.sample.pairs, similar_max=3, min_respondents=3)
    titles = [section.title for section in effort_sections(result, bts, tmp_path)]
    assert "effect_sizes.csv" in {p.name for p in tmp_path.iterdir()} and len(titles) > 5
