"""Where a report's numbers come from, stated at its top (``templates/reports/_provenance.html``):
study and version (or the data file), the participants included and those dropped by reason, seeds,
settings, the calibration an audit used, software versions and the date."""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path

import pandas as pd

PACKAGES = ("Django", "numpy", "pandas", "scipy", "statsmodels", "pingouin", "scikit-learn", "plotly")
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@cache
def software_versions() -> dict[str, str]:
    """This platform's version (pyproject.toml) and the versions of the packages that compute."""
    versions = {"platform": tomllib.loads(PYPROJECT.read_text())["project"]["version"]}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


@dataclass(frozen=True)
class CalibrationUsed:
    """The human calibration an audit used: whose study, which version, N participants, alpha and CI."""

    study: str
    condition: str
    kind: str
    version: int
    n_participants: int | None
    alpha: float
    ci: tuple[float | None, float | None]
    estimand: str = ""  # what alpha and its CI are about (Calibration.estimand_text)


@dataclass
class Provenance:
    """``participants``: counts by status (e.g. with answers, included); ``dropped``: reason -> number
    of participants left out of the analysis; ``seeds``: name -> seed (empty: nothing random);
    ``settings``: inputs and options (data files, alpha, k, ...)."""

    study: str = ""
    version: int | None = None
    participants: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    calibration: CalibrationUsed | None = None
    software: dict[str, str] = field(default_factory=lambda: software_versions())
    created: datetime = field(default_factory=lambda: datetime.now(UTC))


def participant_counts(answers: pd.DataFrame) -> tuple[dict[str, int], dict[str, int]]:
    """(participants, dropped) from an export table with ``participant_id`` and ``excluded`` (1 when
    the attention checks exclude the participant)."""
    everyone = answers["participant_id"].nunique()
    excluded = answers.loc[answers["excluded"] == 1, "participant_id"].nunique()
    return (
        {"with answers": everyone, "included": everyone - excluded},
        {"failed the attention checks": excluded},
    )


def study_provenance(study, **fields) -> Provenance:
    """A Provenance of a Study (its slug and title, its version) plus ``fields``."""
    return Provenance(study=f"{study.title} ({study.slug})", version=study.version, **fields)


def settings_text(settings: Mapping[str, object]) -> dict[str, str]:
    """Settings as text for the provenance block (lists joined by spaces, None as 'none')."""

    def text(value: object) -> str:
        if value is None or value == []:
            return "none"
        if isinstance(value, list | tuple):
            return " ".join(str(v) for v in value)
        return str(value)

    return {str(key): text(value) for key, value in settings.items()}
