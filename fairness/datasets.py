"""Readers for public reference data used to validate the metrics (no Django)."""

from pathlib import Path

import numpy as np
import pandas as pd

RACE_CODES = {1: "White", 2: "Black", 3: "Hispanic", 4: "Asian", 5: "Native American", 6: "Other"}


def _read_cr_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        text = handle.read().replace("\r\n", "\n").replace("\r", "\n")
    return [line.split(",") for line in text.split("\n") if line.strip()]


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
    subset = pd.read_csv(folder / "BROWARD_CLEAN_SUBSET.csv")
    subset.columns = [c.split(" ")[0] for c in subset.columns]
    info = subset.set_index("id")
    records = []
    for row in body:
        defendant = int(row[0])
        truth = int(info.at[defendant, "two_year_recid"])
        for worker, cell in zip(workers, row[1:], strict=False):
            cell = cell.strip()
            if cell in ("1", "-1"):
                records.append((defendant, worker, truth if cell == "1" else 1 - truth))
    frame = pd.DataFrame(records, columns=["defendant", "worker", "prediction"])
    frame = frame.join(info[["two_year_recid", "compas_decile_score", "race", "sex"]], on="defendant")
    frame["compas_label"] = (frame["compas_decile_score"] > 4).astype(int)
    frame["race"] = frame["race"].map(RACE_CODES)
    frame["disagreement"] = (frame["prediction"] != frame["compas_label"]).astype(int)
    return frame.astype({"prediction": np.int64})
