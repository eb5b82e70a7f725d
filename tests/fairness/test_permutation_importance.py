"""``fairness.human_audit.permutation_importance`` gives scikit-learn's ``permutation_importance`` exactly (the
same permutations and scores), for both surrogates, with text and numeric features, predicting once."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from fairness.human_audit import permutation_importance


@pytest.mark.parametrize("regressor", [LinearRegression(), RandomForestRegressor(n_estimators=30, random_state=1)])
def test_the_batched_importance_is_scikit_learns(regressor):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"priors": rng.integers(0, 9, 60), "age": rng.normal(35, 9, 60), "charge": rng.choice(["F", "M", "X"], 60)}
    )
    y = frame["priors"] * 0.4 + (frame["charge"] == "F") * 1.5 + rng.normal(0, 0.5, 60)
    coding = ColumnTransformer([("numeric", "passthrough", ["priors", "age"]), ("text", OneHotEncoder(), ["charge"])])
    model = make_pipeline(coding, regressor).fit(frame, y)
    calls = []
    predict = model.predict
    model.predict = lambda x: calls.append(len(x)) or predict(x)
    ours = permutation_importance(model, frame, n_repeats=7, seed=5)
    assert calls == [60, 3 * 7 * 60]  # the model's own predictions, then every permuted copy at once
    model.predict = predict
    expected = sklearn_permutation_importance(
        model, frame, predict(frame), scoring="neg_mean_absolute_error", n_repeats=7, random_state=5
    )
    assert ours.shape == (3, 7) and (ours > 0).any()
    np.testing.assert_array_equal(ours, expected.importances)
