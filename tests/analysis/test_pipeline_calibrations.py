"""``pipeline_calibrations``: the calibrations of ``run_pipeline`` alone (what the analysis's sensitivity rows
need), equal to the whole pipeline's, with the same refusals."""

import pytest

from analysis.pipeline import pipeline_calibrations, run_pipeline


@pytest.fixture
def pairs(demo_spec):
    from simulation.effort import simulate_pairs
    from studies.services import stored_file

    return simulate_pairs(stored_file(demo_spec)[0], 12, seed=4).assign(reference="K")


@pytest.mark.parametrize("generalise", [None, "stimuli"])
def test_the_calibrations_equal_the_whole_pipelines(pairs, generalise):
    whole = run_pipeline(pairs, seed=3, n_resamples=60, mixed_models=False, generalise=generalise)
    alone = pipeline_calibrations(pairs, seed=3, n_resamples=60, generalise=generalise)
    assert alone.calibrations == whole.calibrations and len(alone.calibrations) == 2  # every field, the CIs too
    assert alone.sample.included == whole.sample.included and alone.sample.dropped == whole.sample.dropped
    other_seed = pipeline_calibrations(pairs, seed=4, n_resamples=60, generalise=generalise)
    assert [c.ci for c in other_seed.calibrations] != [c.ci for c in alone.calibrations]  # the seed is used


def test_the_same_refusals_as_the_pipeline(pairs):
    income = pairs.loc[pairs["condition"] == "income", "participant_id"].unique()
    lonely = pairs[(pairs["condition"] != "income") | (pairs["participant_id"] == income[0])]
    with pytest.raises(ValueError, match=r"too few participants with rated pairs in a condition .*1 in 'income'"):
        pipeline_calibrations(lonely, n_resamples=20)
    with pytest.raises(ValueError, match="too few participants to analyse"):
        pipeline_calibrations(pairs[pairs["participant_id"].isin(income[:2])], n_resamples=20)
    with pytest.raises(ValueError, match="generalising over stimuli needs the pairs table's columns"):
        pipeline_calibrations(pairs.drop(columns="reference"), n_resamples=20, generalise="stimuli")
