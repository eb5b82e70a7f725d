"""The audit of a Parquet subjects file on Dask (fairness.dask_subjects, audit(exact_on_dask=...)) gives the
single-machine audit's numbers; only the audited columns leave the file. The test uses the suite's
two-worker local cluster (tests/conftest.py)."""

import numpy as np
import pandas as pd
import pytest

from fairness.dask_subjects import audited_columns, read_subjects_dask
from fairness.model_audit import SubjectsFileError, audit, read_subjects
from tests.fairness.test_model_audit import table


def subjects_table(n=400, seed=0):
    """The model audit tests' table with a label-only model, the truth and features the audit does not read."""
    rng = np.random.default_rng(seed + 1)
    features = {f"feature_{k}": rng.normal(size=n) for k in range(5)}
    return table(n, seed).assign(label_b=rng.integers(0, 2, n), truth=rng.integers(0, 2, n), **features)


@pytest.mark.slow  # on the suite's shared Dask cluster (13 CPU-seconds to start: tests/conftest.py)
def test_dask_engine_gives_the_single_machine_numbers(tmp_path, dask_cluster):
    path = tmp_path / "subjects.parquet"
    subjects_table().to_parquet(path, row_group_size=100)  # several row groups
    options = {"groups": ["sex"], "outcome_column": "truth"}
    settings = {"desirable": False, "scale": 10.0, "alphas": {"human": 0.6577}, "n_resamples": 50, "seed": 3}
    single = audit(read_subjects(path, **options), **settings)
    frame = read_subjects_dask(path, scheduler=dask_cluster.scheduler_address, **options)
    assert not any(c.startswith("feature_") for c in frame.columns)
    on_dask = audit(
        read_subjects(frame, **options), exact_on_dask=True, scheduler=dask_cluster.scheduler_address, **settings
    )
    pd.testing.assert_frame_equal(single.group_metrics, on_dask.group_metrics)
    assert set(single.group_metrics["metric"]) >= {"selection_rate", "false_positive_rate", "false_negative_rate"}
    np.testing.assert_allclose(on_dask.eaif["eaif"], single.eaif["eaif"], rtol=1e-12)
    np.testing.assert_array_equal(on_dask.eaif["violation_share"], single.eaif["violation_share"])
    assert set(on_dask.eaif["method"]) == {"exact, on Dask"} and set(single.eaif["method"]) == {"exact"}


def test_guessed_groups_keep_every_column_and_named_ones_only_the_audited():
    names = ["id", "x_1", "score_a", "label_b", "sex", "truth", "race", "zip", "feature_0"]
    assert audited_columns(names, groups=None, outcome_column=None) == names
    assert audited_columns(names, groups=["sex"], outcome_column="truth") == names[:7]


def test_a_file_that_is_not_parquet_is_refused_on_both_engines(tmp_path):
    path = tmp_path / "subjects.parquet"
    path.write_text("id,score_a\n1,0.5\n")
    with pytest.raises(SubjectsFileError, match="cannot read"):
        read_subjects(path)
    with pytest.raises(SubjectsFileError, match="as Parquet"):
        read_subjects_dask(path)
