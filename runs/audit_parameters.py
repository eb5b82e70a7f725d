"""The model audit's parameters, in one place: ``audit_models``' options, the API's and the dashboard form's fields
(``runs.serializers.AuditRequestSerializer``), the job's stored ``params`` and the service's argument
(``runs.audit_runs.audit_run_create``) all read their defaults here. Light: no scientific import (the web form)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from fairness.sampling_options import BOUNDS, MAX_PAIRS, MIN_HALF_WIDTH, MIN_PAIRS, SAMPLED_PAIRS
from runs.human_source_options import OPTIONS


@dataclass(frozen=True)
class AuditParameters:
    """What an audit is asked for (every field has the command's option of the same name, ``-`` for ``_``):
    the audited ``condition`` and Likert ``calibration_id`` (None: the calibration's, else the first; the
    latest Likert one), the ``shown_model`` participants saw, the bootstrap's ``seed`` and ``n_resamples``,
    the sources of what people said (``metric_from``, ``utility_from``, ``features_from``, ``tradeoff_from``:
    ``SLUG[:BLOCK]``)
    with their rater groups ``by``, the human metric's Lipschitz constant ``lipschitz``, the ``surrogate`` of
    each model under ``features_from``, the sensitive columns ``groups`` (None: an effort file's guessed ones,
    else none), the truth ``outcome_column`` and the adjustment of the notions' tests within each model's family
    ``multiple_testing`` (holm, bh or none); ``engine`` "dask" reads a Parquet subjects file on Dask with the
    cluster ``scheduler`` (the command only: a request never names a host), ``exact_eaif`` every EaIF exact on
    Dask; above the exact limit EaIF is sampled from ``n_pairs`` uniform pairs with intervals by ``bound``
    (bernstein, hoeffding or normal), or, with ``half_width``, until the interval is at most that wide
    (``half_width`` wins: ``n_pairs`` is then the first check; see :func:`sampling_problems` for the limits)."""

    condition: str | None = None
    calibration_id: int | None = None
    shown_model: str | None = "study_ai"
    seed: int = 1
    n_resamples: int = 1000
    metric_from: str | None = None
    utility_from: str | None = None
    features_from: str | None = None
    tradeoff_from: str | None = None
    by: tuple[str, ...] = ()
    lipschitz: float = 1.0
    surrogate: str = "linear"
    groups: tuple[str, ...] | None = None
    outcome_column: str | None = None
    multiple_testing: str = "holm"
    engine: str = "pandas"
    scheduler: str | None = None
    exact_eaif: bool = False
    bound: str = BOUNDS[0]
    n_pairs: int = SAMPLED_PAIRS
    half_width: float | None = None

    @classmethod
    def from_request(cls, params: Mapping[str, Any]) -> "AuditParameters":
        """The parameters of a request's validated fields or a job's stored ``params`` (the API names the
        calibration ``calibration``): a blank or missing field takes its default (jobs queued before an
        option existed run with its default)."""
        named = {"calibration_id": params.get("calibration", params.get("calibration_id"))}
        given = {f.name: named.get(f.name, params.get(f.name)) for f in fields(cls)}
        kept = {name: value for name, value in given.items() if value is not None and value != ""}
        for name in ("by", "groups"):  # lists in JSON; an empty groups list names no column (None guesses)
            if name in kept:
                kept[name] = tuple(kept[name])
        return cls(**kept)

    @property
    def sources(self) -> dict[str, str]:
        """The given sources of what people said: option (``metric_from`` ...) -> ``SLUG[:BLOCK]``."""
        return {option: reference for option in OPTIONS if (reference := getattr(self, option))}


def sampling_problems(*, bound: object, n_pairs: object, half_width: object) -> dict[str, list[str]]:
    """Each sampling option's problem (empty: none): ``bound`` one of :data:`BOUNDS`, ``n_pairs`` a whole number
    from 1,000 to the cap of 1,000,000,000 pairs, ``half_width`` None or a number in [5e-05, 0.5) (a narrower
    target could need more pairs than the cap: Hoeffding's ln(2/0.05) / (2 h^2) is 7.4e8 at 5e-05)."""
    problems = {}
    if bound not in BOUNDS:
        problems["bound"] = f"--bound must be one of {', '.join(BOUNDS)}, not {bound!r}"
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or not MIN_PAIRS <= n_pairs <= MAX_PAIRS:
        problems["n_pairs"] = (
            f"--n-pairs must be a whole number of sampled pairs from {MIN_PAIRS:,} to the cap of {MAX_PAIRS:,}, "
            f"not {n_pairs!r}"
        )
    if half_width is None:
        pass
    elif (
        isinstance(half_width, bool)
        or not isinstance(half_width, int | float)
        or not (math.isfinite(half_width) and 0 < half_width < 0.5)
    ):
        problems["half_width"] = (
            f"--half-width must be a number from {MIN_HALF_WIDTH:g} to below 0.5, not {half_width!r}"
        )
    elif half_width < MIN_HALF_WIDTH:
        problems["half_width"] = (
            f"--half-width {half_width:g} is narrower than {MIN_HALF_WIDTH:g}: it could need more than the cap of "
            f"{MAX_PAIRS:,} sampled pairs (Hoeffding's interval needs ln(2/0.05) / (2 h^2) pairs, "
            f"{math.log(40) / (2 * MIN_HALF_WIDTH**2):.1e} at h = {MIN_HALF_WIDTH:g})"
        )
    return {name: [problem] for name, problem in problems.items()}


DEFAULTS = AuditParameters()
