"""Readers for public reference data used to validate the metrics (no Django)."""

from pathlib import Path

import numpy as np
import pandas as pd

RACE_CODES = {1: "White", 2: "Black", 3: "Hispanic", 4: "Asian", 5: "Native American", 6: "Other"}


def _read_cr_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        text = handle.read().replace("\r\n", "\n").replace("\r", "\n")
    return [line.split(",") for line in text.split("\n") if line.strip()]


def _broward_subset(folder: Path) -> pd.DataFrame:
    """``BROWARD_CLEAN_SUBSET.csv`` (headers cut at their first space) with ``race`` as a name and
    ``compas_label`` (decile score > 4) added."""
    subset = pd.read_csv(folder / "BROWARD_CLEAN_SUBSET.csv")
    subset.columns = [c.split(" ")[0] for c in subset.columns]
    return subset.assign(
        race=subset["race"].map(RACE_CODES), compas_label=(subset["compas_decile_score"] > 4).astype(int)
    )


def load_dressel_farid(folder: str | Path, *, race_shown: bool) -> pd.DataFrame:
    """Dressel & Farid (2018) crowd answers in long form: one row per worker x defendant with
    ``defendant``, ``worker``, ``prediction`` (the worker's recidivism call), ``two_year_recid``,
    ``compas_label`` (decile score > 4), ``race`` (name), ``sex`` (0 male, 1 female) and
    ``disagreement`` (s = 1 when the worker's call differs from COMPAS's label).

    The MTURK files have CR-only line endings, a header row of worker codes, a literal 'id,,,' row,
    then +1 (worker correct) / -1 (wrong) / blank; the worker's prediction is two_year_recid if
    correct, else its opposite.
    """
    folder = Path(folder)
    rows = _read_cr_csv(folder / ("MTURK_RACE.csv" if race_shown else "MTURK_NO_RACE.csv"))
    workers = rows[0][1:]
    body = [r for r in rows[2:] if r and r[0].strip()]
    info = _broward_subset(folder).set_index("id")
    records = []
    for row in body:
        defendant = int(row[0])
        truth = int(info.at[defendant, "two_year_recid"])
        for worker, cell in zip(workers, row[1:], strict=False):
            cell = cell.strip()
            if cell in ("1", "-1"):
                records.append((defendant, worker, truth if cell == "1" else 1 - truth))
    frame = pd.DataFrame(records, columns=["defendant", "worker", "prediction"])
    frame = frame.join(info[["two_year_recid", "compas_decile_score", "race", "sex", "compas_label"]], on="defendant")
    frame["disagreement"] = (frame["prediction"] != frame["compas_label"]).astype(int)
    return frame.astype({"prediction": np.int64})


WORKER_AGE = {1: "under 18", 2: "18-24", 3: "25-34", 4: "35-44", 5: "45-54", 6: "55-64", 7: "65-74", 8: "75 or older"}
WORKER_GENDER = {0: "male", 1: "female", 2: "preferred to describe"}
WORKER_RACE = {
    1: "White",
    2: "Black or African American",
    3: "Hispanic or Latino",
    4: "Asian",
    5: "American Indian or Alaska Native",
    6: "Native Hawaiian or Pacific Islander",
    7: "preferred to describe",
}
WORKER_EDUCATION = {
    1: "less than high school",
    2: "high school graduate",
    3: "some college, no degree",
    4: "associate degree",
    5: "bachelor's degree",
    6: "master's degree",
    7: "doctoral degree",
    8: "professional degree",
}


def load_dressel_farid_workers(folder: str | Path, *, race_shown: bool) -> pd.DataFrame:
    """The 400 workers' self-reported demographics (``MTURK_*_DEMOGRAPHICS.csv``), one row per worker:
    ``worker`` (the code heading the answer matrix's column), ``age``, ``gender``, ``race``,
    ``education`` (labels from the authors' README) and ``block`` (which 50 defendants they saw).

    The files end with blank rows (dropped). A code the README does not define (one worker's gender
    is 3 in the race-shown file) becomes ``"code N (undocumented)"`` rather than a guess.
    """
    name = "MTURK_RACE_DEMOGRAPHICS.csv" if race_shown else "MTURK_NO_RACE_DEMOGRAPHICS.csv"
    rows = _read_cr_csv(Path(folder) / name)
    body = [r[:6] for r in rows[1:] if r and r[0].strip()]
    frame = pd.DataFrame(body, columns=["worker", "age", "gender", "race", "education", "block"])
    for column, codes in (
        ("age", WORKER_AGE),
        ("gender", WORKER_GENDER),
        ("race", WORKER_RACE),
        ("education", WORKER_EDUCATION),
    ):
        frame[column] = [codes.get(int(v), f"code {v} (undocumented)") for v in frame[column]]
    frame["block"] = frame["block"].astype(int)
    if frame["worker"].duplicated().any():
        raise ValueError(f"{name}: a worker code appears twice")
    return frame


SEX_NAMES = {0: "male", 1: "female"}
CHARGE_DEGREES = {0: "misdemeanor", 1: "felony"}


def load_dressel_farid_defendants(folder: str | Path) -> pd.DataFrame:
    """The 1,000 defendants workers judged (``BROWARD_CLEAN_SUBSET.csv``), one row per defendant in the
    file's order: ``id``, ``block`` (1..20: which 50 a worker saw), ``race`` (name), ``sex``
    ("male"/"female"), ``age``, ``juv_fel_count``, ``juv_misd_count``, ``priors_count``, ``charge`` (the
    simplified name workers read, ``CHARGE_ID.csv``'s ``mturk_charge_name``), ``degree``
    ("misdemeanor"/"felony"), ``compas_decile_score`` (1..10), ``compas_label`` (decile > 4) and
    ``two_year_recid``.
    """
    folder = Path(folder)
    subset = _broward_subset(folder)
    charges = pd.read_csv(folder / "CHARGE_ID.csv", usecols=["charge_id", "mturk_charge_name"]).dropna()
    names = dict(zip(charges["charge_id"].astype(int), charges["mturk_charge_name"].str.strip(), strict=True))
    missing = sorted(set(subset["charge_id"]) - set(names))
    if missing:
        raise ValueError(f"CHARGE_ID.csv has no name for charge_id {missing[0]}")
    frame = subset.rename(columns={"block_num": "block"})
    frame["sex"] = frame["sex"].map(SEX_NAMES)
    frame["charge"] = frame["charge_id"].map(names)
    frame["degree"] = frame["charge_degree"].map(CHARGE_DEGREES)
    columns = ["id", "block", "race", "sex", "age", "juv_fel_count", "juv_misd_count", "priors_count", "charge"]
    return frame[[*columns, "degree", "compas_decile_score", "compas_label", "two_year_recid"]]


BISWAS_FILE = "turkprime_survey_data_clean.csv"
BISWAS_RESPONDENT = [  # the respondent's columns: together they tell respondents apart (resp_id alone does not)
    "resp_id", "random", "resp_race", "resp_gender", "resp_state", "resp_polview", "resp_reason", "resp_age",
    "resp_educ4",
]  # fmt: skip
BISWAS_EDUCATION = {
    1: "less than secondary",
    2: "secondary or post-secondary non-tertiary",
    3: "Bachelor's or some post-graduate",
    4: "post-graduate",
}


def load_biswas(folder: str | Path) -> pd.DataFrame:
    """Biswas et al. (COMPASS 2020) TurkPrime survey in long form, one row per respondent x vignette in
    the file's order, with ``respondent``: ``<resp_id>-v<random>`` (the questionnaire version), and
    ``-2`` for the second respondent with the same pair (the release's 19,760 rows are 988 respondents
    of 20 vignettes, told apart by all their columns: 966 distinct resp_id, 22 of them shared by two
    people of different demographics); ``compas_label`` = decile_score > 4 (as Dressel & Farid); the
    codebook's columns otherwise (``resp_decision`` 1 = predicts recidivism; ``resp_age`` may be missing)."""
    frame = pd.read_csv(Path(folder) / BISWAS_FILE)
    key = frame[BISWAS_RESPONDENT].astype(object).fillna("").astype(str).agg("|".join, axis=1)
    first_row = pd.Series(np.arange(len(frame)), index=frame.index).groupby(key).transform("min")
    people = frame.assign(_key=key, _first=first_row).drop_duplicates("_key").sort_values("_first")
    base = people["resp_id"].astype(str) + "-v" + people["random"].astype(str)
    nth = base.groupby(base).cumcount()
    names = base.where(nth == 0, base + "-" + (nth + 1).astype(str))
    frame["respondent"] = key.map(dict(zip(people["_key"], names, strict=True)))
    counts = frame.groupby("respondent").size()
    if (counts != 20).any():
        raise ValueError(f"{BISWAS_FILE}: respondent {counts[counts != 20].index[0]} has not 20 vignettes")
    return frame.assign(compas_label=(frame["decile_score"] > 4).astype(int))
