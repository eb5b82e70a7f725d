"""The demo audit's subjects table: three scikit-learn models trained on synthetic subjects.

For one condition of the demo study, 4,000 synthetic subjects are drawn with the demo generator
(:func:`studies.demo_study.draw_population`); a true outcome is drawn from a logistic model of the
total, the last year and the trend (rising income or falling arrests lowers the risk), plus a
group effect. Logistic regression, a random forest and gradient boosting are trained on half of
them (features: the yearly values, total, slope, age, sex; race is not a feature) and score the
other half together with the study's own subjects of that condition, whose ids (K1, P3, ...) match
the study's yes/no prompts. ``score_study_ai`` is the demo AI the participants saw.
"""

import numpy as np
import pandas as pd

from fairness.effort import trend_slope
from studies.demo_study import YEARS, draw_population, risk_scores


def _features(subjects: list[dict]) -> np.ndarray:
    series = np.array([s["series"] for s in subjects], dtype=float)
    slope = np.array([trend_slope(row) for row in series])
    age = np.array([s["demographics"]["age"] for s in subjects], dtype=float)
    female = np.array([s["demographics"]["sex"] == "Female" for s in subjects], dtype=float)
    return np.column_stack([series, series.sum(axis=1), slope, age, female])


def _outcome(condition: str, subjects: list[dict], rng: np.random.Generator) -> np.ndarray:
    series = np.array([s["series"] for s in subjects], dtype=float)
    slope = np.array([trend_slope(row) for row in series])
    black = np.array([s["demographics"]["race"] == "Black" for s in subjects], dtype=float)
    if condition == "arrests":
        logit = -2.0 + 0.1 * series.sum(axis=1) + 0.3 * series[:, -1] + 0.6 * slope + 0.3 * black
    else:
        logit = 1.2 - 0.05 * series.sum(axis=1) - 0.15 * series[:, -1] - 0.5 * slope + 0.3 * black
    return (rng.random(len(subjects)) < 1 / (1 + np.exp(-logit))).astype(int)


def demo_subjects_table(spec: dict, condition: str, *, seed: int = 7, n: int = 4000) -> pd.DataFrame:
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # here: only this trains models
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    population = draw_population(condition, n, rng)
    cond = next(c for c in spec["conditions"] if c["key"] == condition)
    train, held_out = population[: n // 2], population[n // 2 :]
    x_train, y_train = _features(train), _outcome(condition, train, rng)
    models = {
        "logistic_regression": LogisticRegression(max_iter=2000),
        "random_forest": RandomForestClassifier(n_estimators=200, min_samples_leaf=20, random_state=seed),
        "gradient_boosting": GradientBoostingClassifier(random_state=seed),
    }
    audited = cond["subjects"] + [{**s, "id": f"X{i:04d}"} for i, s in enumerate(held_out)]
    x_audit = _features(audited)
    table = pd.DataFrame({"id": [s["id"] for s in audited]})
    for t, label in enumerate(YEARS):
        table[f"x_{label}"] = [s["series"][t] for s in audited]
    for column in ("race", "sex", "age_group"):
        table[column] = [s["demographics"][column] for s in audited]
    for name, model in models.items():
        model.fit(x_train, y_train)
        table[f"score_{name}"] = np.round(model.predict_proba(x_audit)[:, 1], 5)
    study_scores = {s["id"]: s["risk_score"] for s in cond["subjects"]}
    races = [s["demographics"]["race"] for s in audited]
    demo_ai = risk_scores(condition, np.array([s["series"] for s in audited], dtype=float), races)
    table["score_study_ai"] = [
        study_scores.get(s["id"], round(float(v), 4)) for s, v in zip(audited, demo_ai, strict=True)
    ]
    return table
