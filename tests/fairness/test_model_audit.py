import numpy as np
import pandas as pd
import pytest

from fairness.disagreement import disagreement_notions
from fairness.model_audit import SubjectsFileError, audit, read_subjects


def table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"id": [f"s{i}" for i in range(n)]})
    for t in range(4):
        frame[f"x_{2019 + t}"] = rng.poisson(2, n)
    frame["race"] = rng.choice(["White", "Black", "Asian"], n)
    frame["sex"] = rng.choice(["Male", "Female"], n)
    frame["score_a"] = rng.uniform(0, 1, n).round(3)
    frame["score_b"] = np.clip(frame["score_a"] + rng.normal(0, 0.1, n), 0, 1).round(3)
    return frame


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: f.drop(columns="id"), "missing column 'id'"),
        (lambda f: f.drop(columns=["x_2019", "x_2020"]), "at least 3 effort columns"),
        (lambda f: f.drop(columns=["score_a", "score_b"]), "score_<model>"),
        (lambda f: f.assign(score_a=f["score_a"] + 2), "'score_a' must lie in [0, 1]"),
        (lambda f: f.assign(x_2019="many"), "'x_2019': non-numeric"),
        (
            lambda f: f.assign(x_2020=np.where(f.index == 3, np.inf, f["x_2020"])),
            "'x_2020': non-numeric, missing or infinite values in rows [3]",
        ),
        (lambda f: f.assign(race="Martian"), "no inertia value for group(s) ['Martian']"),
        (lambda f: pd.concat([f, f.head(1)]), "duplicate ids"),
    ],
)
def test_bad_subject_files_get_specific_errors(edit, message):
    with pytest.raises(SubjectsFileError) as info:
        read_subjects(edit(table()))
    assert message in str(info.value)


def test_audit_compares_models_under_both_weight_sets():
    subjects = read_subjects(table())
    assert subjects.models == ["a", "b"] and set(subjects.group_columns) == {"race", "sex"}
    result = audit(subjects, desirable=False, scale=1.0, alphas={"human": 0.66})
    assert set(result.eaif["weights"]) == {"equal", "human"} and len(result.eaif) == 4
    assert result.eaif["eaif"].between(0, 1).all()
    assert list(result.parity.index) == ["a", "b"] and list(result.parity.columns) == ["race", "sex"]


def yes_no_feedback(frame: pd.DataFrame) -> pd.DataFrame:
    """10 participants' yes/no answers on every fourth subject, labels shown by model a, 30% disagreeing."""
    rng = np.random.default_rng(3)
    shown = (frame["score_a"] >= 0.5).astype(int)
    rows = [
        {
            "participant": f"p{p}",
            "subject": frame["id"][i],
            "model_label": shown[i],
            "disagreement": int(rng.random() < 0.3),
        }
        for p in range(10)
        for i in range(0, len(frame), 4)
    ]
    return pd.DataFrame(rows)


def test_feedback_scores_every_model_through_critic_labels():
    frame = table(200, seed=2)
    subjects = read_subjects(frame)
    feedback = yes_no_feedback(frame)
    result = audit(subjects, desirable=False, scale=1.0, feedback=feedback, shown_model="a", n_resamples=100)
    critic = np.where(feedback["disagreement"] == 1, 1 - feedback["model_label"], feedback["model_label"])
    info = frame.set_index("id")
    label_b = (info.loc[feedback["subject"], "score_b"].to_numpy() >= 0.5).astype(int)
    direct = disagreement_notions(
        info.loc[feedback["subject"], "race"].to_numpy(), label_b, (label_b != critic).astype(int)
    )
    got = result.notions[(result.notions["model"] == "b")].set_index("notion")["value"]
    for name, value in direct.notions.items():
        assert got[name] == pytest.approx(value.value)
    a_rows = result.notions[result.notions["model"] == "a"]
    assert a_rows["disagreement_rate"].iloc[0] == pytest.approx(feedback["disagreement"].mean())
    assert result.disagreement_calibration is not None and 0 <= result.disagreement_calibration.alpha <= 1


@pytest.mark.parametrize(
    "column",
    [
        "score_<script>alert(1)</script>",
        'score_x"onmouseover=alert(1)',
        "score_",
        "score_" + "m" * 65,
        "<img src=x onerror=alert(1)>",
        "=HYPERLINK(1)",
        "age group",
        "x_2019<b>",
    ],
)
def test_unsafe_column_names_are_refused_naming_the_column(column):
    frame = table(20).assign(**{column: 0.5})
    with pytest.raises(SubjectsFileError) as info:
        read_subjects(frame)
    assert repr(column) in str(info.value) and "letters, digits" in str(info.value)


def test_safe_column_names_are_accepted():
    frame = table(20).rename(columns={"score_a": "score_model.v2-1", "sex": "Sex_2"})
    subjects = read_subjects(frame)
    assert subjects.models == ["model.v2-1", "b"] and "Sex_2" in subjects.group_columns


def test_audit_module_is_pure():
    import subprocess
    import sys

    code = "import fairness, analysis.report, fairness.relative_reports, sys; print('django' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


def test_an_audit_with_no_resamples_is_refused_clearly():
    import pandas as pd

    from fairness.model_audit import audit, read_subjects

    table = pd.DataFrame({"id": range(4), "sex": ["f", "m"] * 2, "label_m": [0, 1, 1, 1]})
    with pytest.raises(ValueError, match="n_resamples must be at least 1, got 0"):
        audit(read_subjects(table, groups=["sex"]), n_resamples=0)


def test_notions_get_no_gap_tests_adjusted_within_each_model():
    """Each notion's permutation p (groups permuted among subjects, as fairness.disagreement tests it) sits
    beside its Holm-adjusted p within its model's family (Holm 1979 by hand), and the families name them."""
    frame = table(200, seed=2)
    subjects = read_subjects(frame)
    feedback = yes_no_feedback(frame)
    result = audit(subjects, desirable=False, scale=1.0, feedback=feedback, shown_model="a", n_resamples=99)
    notions = result.notions
    assert result.multiple_testing["method"] == "holm"
    families = result.multiple_testing["families"]
    assert set(families) == {"notions/pvalue/a", "notions/pvalue/b"}
    for model in ("a", "b"):
        rows = notions[notions["model"] == model].dropna(subset=["pvalue"])
        assert sorted(families[f"notions/pvalue/{model}"]) == sorted(rows["test_id"])
        p = np.sort(rows["pvalue"].to_numpy())
        holm = np.minimum(1, np.maximum.accumulate(p * np.arange(len(p), 0, -1)))
        np.testing.assert_allclose(np.sort(rows["pvalue_adjusted"].to_numpy()), holm)
        assert ((rows["pvalue"] > 0) & (rows["pvalue"] <= 1)).all()
    none = audit(subjects, feedback=feedback, shown_model="a", n_resamples=99, multiple_testing="none").notions.dropna(
        subset=["pvalue"]
    )
    np.testing.assert_allclose(none["pvalue_adjusted"], none["pvalue"])
