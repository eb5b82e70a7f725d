"""The CST paper's law-school experiment (LSAC data, Section 5.3): gender, race, and both.

Data: ``clean_LawSchool.csv`` (21,790 students; sex, race_nonwhite, LSAT, UGPA). The decision maker
is the authors' b(): Y = 1 (admitted) when 0.6 * UGPA + 0.4 * LSAT >= 20.8 (their min_score, a
fact of their experiment), negative outcome Y = 0. Protected values: Female (gender), NonWhite
(race); "multiple" tests both attributes at alpha / 2 (Bonferroni) and counts complainants flagged
for both; "intersectional" uses the combined attribute female_nonwhite (1 = Female & NonWhite).

Two modes:

* ``paper`` (default), the paper's equations: counterfactuals from our linear additive-noise SCM on
  the DAG sex -> {LSAT, UGPA} <- race_nonwhite (least squares, no rounding or clipping), the
  intersectional counterfactual do(sex := Male, race_nonwhite := White) on that DAG; distances over
  LSAT and UGPA only, range-normalised (Eq. 4); situation testing in paper mode.
* ``reference``, the authors' code and files, which reproduce Tables 10-13 exactly: their
  counterfactual files ``cf_LawSchool_lev3_do{Male,White,MaleWhite}.csv`` (read from the data's
  folder; LSAT rounded before the fit, counterfactuals rounded to 3 decimals and clipped to
  [10, 48] and [0, 4]; the intersectional file comes from one merged node female_nonwhite, so
  do(female_nonwhite := 0) moves only non-white women); the race distance also counts sex (overlap
  distance: they list it as a nominal attribute and leave out only the protected one); situation
  testing in reference mode (z-scores, rounded Wald rule, k + 1 control rule).
"""

from collections.abc import Sequence
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
MODES = ("paper", "reference")
METHODS = ("ST", "CSTwo", "CSTwi", "CF")
COUNT_COLUMNS = ["k", *METHODS, *(f"{m}_sig" for m in METHODS)]
# The authors' counterfactual files (their data/counterfactuals/), beside clean_LawSchool.csv: file
# name, and their columns that repeat each row's factual attributes (the data's columns joined by
# "-"), checked against the data.
REFERENCE_FILES: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "gender": ("cf_LawSchool_lev3_doMale.csv", {"Sex": ("sex",), "Race": ("race_nonwhite",)}),
    "race": ("cf_LawSchool_lev3_doWhite.csv", {"Sex": ("sex",), "Race": ("race_nonwhite",)}),
    "intersectional": ("cf_LawSchool_lev3_doMaleWhite.csv", {"GenderRace": ("sex", "race_nonwhite")}),
}

# The paper's Tables 10-13 (Alvarez & Ruggieri, Section 5.3; alpha = 0.05, multiple at alpha / 2,
# tau = 0), one tuple per method over K_LIST; "_sig" = the starred (significant) rows. Shown in the
# report beside this run's counts.
PUBLISHED_TABLES = {
    "race": ("Table 10", {
        "ST": (33, 51, 61, 64, 78), "CSTwo": (256, 309, 337, 400, 503),
        "CSTwi": (286, 309, 337, 400, 503), "CF": (231, 231, 231, 231, 231),
        "ST_sig": (28, 28, 45, 47, 61), "CSTwo_sig": (244, 301, 323, 391, 494),
        "CSTwi_sig": (244, 301, 323, 391, 494), "CF_sig": (190, 231, 231, 231, 231),
    }),
    "gender": ("Table 11", {
        "ST": (77, 101, 229, 258, 484), "CSTwo": (78, 120, 253, 296, 493),
        "CSTwi": (99, 129, 267, 296, 493), "CF": (56, 56, 56, 56, 56),
        "ST_sig": (57, 69, 111, 124, 366), "CSTwo_sig": (43, 88, 160, 221, 341),
        "CSTwi_sig": (54, 92, 160, 221, 341), "CF_sig": (20, 15, 30, 21, 32),
    }),
    "multiple": ("Table 12", {
        "ST": (5, 5, 12, 19, 24), "CSTwo": (8, 10, 20, 20, 40),
        "CSTwi": (9, 10, 21, 20, 40), "CF": (5, 5, 5, 5, 5),
        "ST_sig": (0, 0, 5, 5, 15), "CSTwo_sig": (4, 6, 11, 17, 24),
        "CSTwi_sig": (4, 9, 11, 17, 24), "CF_sig": (0, 3, 1, 1, 2),
    }),
    "intersectional": ("Table 13", {
        "ST": (14, 14, 17, 24, 29), "CSTwo": (130, 138, 148, 160, 199),
        "CSTwi": (130, 138, 148, 160, 199), "CF": (113, 113, 113, 113, 113),
        "ST_sig": (14, 14, 13, 23, 26), "CSTwo_sig": (130, 138, 148, 160, 199),
        "CSTwi_sig": (130, 138, 148, 160, 199), "CF_sig": (113, 113, 113, 113, 113),
    }),
}  # fmt: skip


def admit(frame: pd.DataFrame) -> np.ndarray:
    return (0.6 * frame["UGPA"] + 0.4 * frame["LSAT"] >= MIN_SCORE).astype(int).to_numpy()


@dataclass(frozen=True)
class Experiment:
    """One single-attribute test: the factual and counterfactual tables (same rows, same order,
    b() applied to both), the protected column and value, and the features of the distance."""

    data: pd.DataFrame
    counterfactuals: pd.DataFrame
    protected: str
    protected_value: object
    features: list[str]


@dataclass(frozen=True)
class LawSchoolResults:
    gender: SituationTestingResult
    race: SituationTestingResult
    intersectional: SituationTestingResult
    multiple: pd.DataFrame  # per k: complainants flagged for gender and for race at alpha / 2
    n_protected: dict
    data: pd.DataFrame  # the cleaned data the runs used
    mode: str = "paper"


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
    both = _with_intersection(data)
    cf = scm.counterfactuals(data, {"sex": "Male", "race_nonwhite": "White"})
    cf = cf.assign(Y=admit(cf), female_nonwhite=0)
    return both.drop(columns=["sex", "race_nonwhite"]), cf.drop(columns=["sex", "race_nonwhite"])


def _with_intersection(data: pd.DataFrame) -> pd.DataFrame:
    return data.assign(female_nonwhite=intersectional_attribute(data, ["sex", "race_nonwhite"], ["Female", "NonWhite"]))


def paper_tests(data: pd.DataFrame) -> dict[str, Experiment]:
    """Gender, race and intersectional tests with our SCM's counterfactuals (see the module)."""
    scm = fit_linear_scm(data, DAG)

    def counterfactual(do: dict) -> pd.DataFrame:
        cf = scm.counterfactuals(data, do)
        return cf.assign(Y=admit(cf))

    both, both_cf = intersectional_data(data, scm)
    return {
        "gender": Experiment(data, counterfactual({"sex": "Male"}), "sex", "Female", FEATURES),
        "race": Experiment(data, counterfactual({"race_nonwhite": "White"}), "race_nonwhite", "NonWhite", FEATURES),
        "intersectional": Experiment(both, both_cf, "female_nonwhite", 1, FEATURES),
    }


def read_reference_counterfactuals(
    path: str | Path, data: pd.DataFrame, check: dict[str, tuple[str, ...]]
) -> pd.DataFrame:
    """One of the authors' counterfactual files as a table like ``data``: LSAT and UGPA from their
    scf_LSAT and scf_UGPA, sex and race_nonwhite kept factual, b() applied. Their rows are the
    data's rows in the same order; each column in ``check`` (their repeat of each row's factual
    attributes: the named data columns joined by "-") must agree with the data, else ValueError."""
    cf = pd.read_csv(path, sep="|").reset_index(drop=True)
    missing = [c for c in ("scf_LSAT", "scf_UGPA", *check) if c not in cf.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    if len(cf) != len(data):
        raise ValueError(
            f"{path} has {len(cf)} rows, the data {len(data)}: the reference counterfactuals need the full data"
        )
    for column, sources in check.items():
        first, *rest = (data[c].astype(str) for c in sources)
        factual = first.str.cat(rest, sep="-") if rest else first  # vectorised: a row-wise join took seconds
        bad = np.flatnonzero(cf[column].astype(str).to_numpy() != factual.to_numpy())
        if len(bad):
            raise ValueError(
                f"{path}: row {bad[0]} has {column} = {cf[column].iloc[bad[0]]!r} but the data has "
                f"{factual.iloc[bad[0]]!r} ({len(bad)} rows differ): the files do not line up"
            )
    out = data.assign(LSAT=cf["scf_LSAT"].to_numpy(float), UGPA=cf["scf_UGPA"].to_numpy(float))
    return out.assign(Y=admit(out))


def reference_tests(data: pd.DataFrame, folder: str | Path) -> dict[str, Experiment]:
    """Gender, race and intersectional tests as the authors ran them (see the module)."""
    cfs = {
        name: read_reference_counterfactuals(Path(folder) / file, data, check)
        for name, (file, check) in REFERENCE_FILES.items()
    }
    both = _with_intersection(data).drop(columns=["sex", "race_nonwhite"])
    both_cf = cfs["intersectional"].assign(female_nonwhite=0).drop(columns=["sex", "race_nonwhite"])
    return {
        "gender": Experiment(data, cfs["gender"], "sex", "Female", FEATURES),
        "race": Experiment(data, cfs["race"], "race_nonwhite", "NonWhite", ["sex", *FEATURES]),
        "intersectional": Experiment(both, both_cf, "female_nonwhite", 1, FEATURES),
    }


def multiple(gender: SituationTestingResult, race: SituationTestingResult) -> pd.DataFrame:
    """Multiple discrimination per k (Definition 4.6): complainants (non-white women) flagged in both
    single tests, each run at alpha / 2; significant when significant in both (CF: counterfactually
    unfair in both, CSTwi significant in both)."""
    rows = []
    for kk in sorted(set(gender.individuals["k"])):
        g = gender.individuals[gender.individuals["k"] == kk].set_index("complainant")
        r = race.individuals[race.individuals["k"] == kk].set_index("complainant")
        common = g.index.intersection(r.index)
        row = {"k": kk}
        for column in COUNT_COLUMNS[1:]:
            row[column] = int((g.loc[common, column] & r.loc[common, column]).sum())
        rows.append(row)
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def published(name: str) -> pd.DataFrame:
    """The paper's table for ``name`` (gender, race, multiple, intersectional) in the counts layout."""
    return pd.DataFrame({"k": K_LIST, **PUBLISHED_TABLES[name][1]})[COUNT_COLUMNS]


def differences(counts: pd.DataFrame, name: str) -> pd.DataFrame:
    """This run's counts minus the published ones, for the k values the paper reports (rows of
    ``counts`` at other k are left out; a published k missing from ``counts`` is left out too)."""
    table = published(name).set_index("k")
    mine = counts.set_index("k")[COUNT_COLUMNS[1:]]
    common = [kk for kk in table.index if kk in mine.index]
    return (mine.loc[common] - table.loc[common]).reset_index()


def run(
    path: str | Path, *, k: Sequence[int] = K_LIST, alpha: float = 0.05, tau: float = 0.0, mode: str = "paper"
) -> LawSchoolResults:
    """Gender, race and intersectional tests at ``alpha``, multiple discrimination from the gender and
    race tests at alpha / 2; ``mode="reference"`` reads the authors' counterfactual files from the
    folder of ``path``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    data = load(path)
    tests = reference_tests(data, Path(path).parent) if mode == "reference" else paper_tests(data)
    cache = NeighbourCache()  # the alpha / 2 (Bonferroni) runs reuse the alpha runs' neighbours

    def test(name: str, level: float) -> SituationTestingResult:
        spec = tests[name]
        return situation_testing(
            spec.data,
            protected=spec.protected,
            target="Y",
            negative_outcome=0,
            k=list(k),
            alpha=level,
            tau=tau,
            counterfactuals=spec.counterfactuals,
            protected_value=spec.protected_value,
            features=spec.features,
            mode=mode,
            cache=cache,
        )

    single = {name: test(name, alpha) for name in tests}
    n_protected = {
        "gender": int((data["sex"] == "Female").sum()),
        "race": int((data["race_nonwhite"] == "NonWhite").sum()),
        "both": int(tests["intersectional"].data["female_nonwhite"].sum()),
    }
    both = multiple(test("gender", alpha / 2), test("race", alpha / 2))
    return LawSchoolResults(single["gender"], single["race"], single["intersectional"], both, n_protected, data, mode)
