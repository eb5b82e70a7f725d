"""The CST paper's law-school experiment (LSAC data, Section 5): gender, race, and both.

Data: ``clean_LawSchool.csv`` (21,790 students; sex, race_nonwhite, LSAT, UGPA). The decision maker
is the authors' b(): Y = 1 (admitted) when 0.6 * UGPA + 0.4 * LSAT >= 20.8 (their min_score, a
fact of their experiment), negative outcome Y = 0. Counterfactuals come from our linear
additive-noise SCM on the DAG sex -> {LSAT, UGPA} <- race_nonwhite (fitted by least squares, no
rounding or clipping), and b() is applied to them. Protected values: Female (gender), NonWhite
(race); "multiple" tests both attributes at alpha / 2 (Bonferroni) and counts complainants flagged
for both; "intersectional" uses the combined attribute Female & NonWhite with do(Male, White).
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairness.counterfactual import fit_linear_scm
from fairness.situation_testing import (
    NeighbourCache,
    SituationTestingResult,
    intersectional_attribute,
    situation_testing,
)

DAG = {"LSAT": ["sex", "race_nonwhite"], "UGPA": ["sex", "race_nonwhite"]}
FEATURES = ["LSAT", "UGPA"]
MIN_SCORE = 20.8
K_LIST = (15, 30, 50, 100, 250)


def admit(frame: pd.DataFrame) -> np.ndarray:
    return (0.6 * frame["UGPA"] + 0.4 * frame["LSAT"] >= MIN_SCORE).astype(int).to_numpy()


@dataclass(frozen=True)
class LawSchoolResults:
    gender: SituationTestingResult
    race: SituationTestingResult
    intersectional: SituationTestingResult
    multiple: pd.DataFrame  # per k: complainants flagged for gender and for race at alpha / 2
    n_protected: dict
    data: pd.DataFrame  # the cleaned data the runs used


def load(path: str | Path) -> pd.DataFrame:
    data = pd.read_csv(path, sep="|")
    missing = [c for c in ("sex", "race_nonwhite", *FEATURES) if c not in data.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    data = data[["sex", "race_nonwhite", *FEATURES]].reset_index(drop=True)
    data["Y"] = admit(data)
    return data


def intersectional_data(data: pd.DataFrame, scm) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The factual and do(Male, White) counterfactual tables with the combined attribute
    female_nonwhite (1 = Female & NonWhite) instead of sex and race_nonwhite; b() applied to both.
    The intervention also moves white women and non-white men (non-protected here), so some of
    their counterfactual decisions differ; situation testing keeps their factual decisions."""
    both = data.assign(female_nonwhite=intersectional_attribute(data, ["sex", "race_nonwhite"], ["Female", "NonWhite"]))
    cf = scm.counterfactuals(data, {"sex": "Male", "race_nonwhite": "White"})
    cf = cf.assign(Y=admit(cf), female_nonwhite=0)
    return both.drop(columns=["sex", "race_nonwhite"]), cf.drop(columns=["sex", "race_nonwhite"])


def run(path: str | Path, *, k=K_LIST, alpha: float = 0.05, tau: float = 0.0) -> LawSchoolResults:
    data = load(path)
    scm = fit_linear_scm(data, DAG)
    cache = NeighbourCache()  # the alpha / 2 (Bonferroni) runs reuse the alpha runs' neighbours

    def counterfactual(do: dict) -> pd.DataFrame:
        cf = scm.counterfactuals(data, do)
        return cf.assign(Y=admit(cf))

    def test(frame, cf, protected, value, level):
        return situation_testing(
            frame,
            protected=protected,
            target="Y",
            negative_outcome=0,
            k=list(k),
            alpha=level,
            tau=tau,
            counterfactuals=cf,
            protected_value=value,
            features=FEATURES,
            cache=cache,
        )

    gender_cf, race_cf = counterfactual({"sex": "Male"}), counterfactual({"race_nonwhite": "White"})
    gender = test(data, gender_cf, "sex", "Female", alpha)
    race = test(data, race_cf, "race_nonwhite", "NonWhite", alpha)
    both, both_cf = intersectional_data(data, scm)
    intersectional = test(both, both_cf, "female_nonwhite", 1, alpha)
    g_bonf = test(data, gender_cf, "sex", "Female", alpha / 2)
    r_bonf = test(data, race_cf, "race_nonwhite", "NonWhite", alpha / 2)
    rows = []
    for kk in k:
        g = g_bonf.individuals[g_bonf.individuals["k"] == kk].set_index("complainant")
        r = r_bonf.individuals[r_bonf.individuals["k"] == kk].set_index("complainant")
        common = g.index.intersection(r.index)
        row = {"k": kk}
        for method in ("ST", "CSTwo", "CSTwi", "CF"):
            row[method] = int((g.loc[common, method] & r.loc[common, method]).sum())
            row[f"{method}_sig"] = int((g.loc[common, f"{method}_sig"] & r.loc[common, f"{method}_sig"]).sum())
        rows.append(row)
    n_protected = {
        "gender": int((data["sex"] == "Female").sum()),
        "race": int((data["race_nonwhite"] == "NonWhite").sum()),
        "both": int(both["female_nonwhite"].sum()),
    }
    return LawSchoolResults(gender, race, intersectional, pd.DataFrame(rows), n_protected, data)
