"""A study's registered analysis plan and the deviations of an analysis from it.

The plan is what ``analyze_study`` would be asked: which analyses (each a name and its ``--by`` questions),
who is analysed (completed only or not, pilots, the study's own exclusion rules), ``generalise``, the
minimum group sizes, bins and pooling, the multiple-testing method, the seed, the resamples, and the planned
sample size. Its defaults are the command's (``runs.analysis_defaults``). The study file's attention checks,
quality rules and estimators are frozen with the study version the plan names.

A deviation follows Willroth & Atherton (2024, "Best laid plans: a guide to reporting preregistration
deviations", Advances in Methods and Practices in Psychological Science 7(1)): *what* differs from the plan,
*when* (the analysis's date), *why* (the researcher's words, asked for when the analysis starts), its *type*
and its *impact* (what it can change in the results). Deviations are computed from the analysis's parameters,
never typed: a different study version, other rater groups (then the analysis is exploratory), other
exclusions, seed or resamples, another multiple-testing method, other group options, another sample size.

No scientific library is imported here: the web form checks a requested analysis against the plan."""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from runs.analysis_defaults import ANALYSIS_DEFAULTS

PRIMARY = "primary"


class InvalidPlan(ValueError):
    """A plan file that cannot be registered: the message names the field."""


@dataclass(frozen=True)
class PlannedAnalysis:
    name: str
    by: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnalysisPlan:
    """The registered plan (module doc); ``sample_size``: the participants to be analysed (None: not planned)."""

    analyses: tuple[PlannedAnalysis, ...] = (PlannedAnalysis(PRIMARY),)
    include_incomplete: bool = ANALYSIS_DEFAULTS["include_incomplete"]
    include_pilot: bool = ANALYSIS_DEFAULTS["include_pilot"]
    generalise: str | None = None
    multiple_testing: str = ANALYSIS_DEFAULTS["multiple_testing"]
    min_group_size: int = ANALYSIS_DEFAULTS["min_group_size"]
    min_subject_group: int = ANALYSIS_DEFAULTS["min_subject_group"]
    pool_small: bool = ANALYSIS_DEFAULTS["pool_small"]
    bins: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    seed: int = ANALYSIS_DEFAULTS["seed"]
    n_resamples: int = ANALYSIS_DEFAULTS["n_resamples"]
    sample_size: int | None = None
    hypotheses: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["analyses"] = [{"name": a.name, "by": list(a.by)} for a in self.analyses]
        out["bins"] = {k: list(v) for k, v in self.bins.items()}
        return out


_TYPES = {
    "include_incomplete": bool,
    "include_pilot": bool,
    "pool_small": bool,
    "multiple_testing": str,
    "min_group_size": int,
    "min_subject_group": int,
    "seed": int,
    "n_resamples": int,
    "hypotheses": str,
}


def plan_from(data: Mapping[str, Any] | None, spec: dict, *, by: Sequence[str] = ()) -> AnalysisPlan:
    """The plan of a plan file's ``data`` (None: the command's defaults, split by ``by``), checked field by
    field; ``generalise`` defaults to the study file's ``analysis.generalise`` and ``sample_size`` to its
    ``recruitment.target``."""
    data = dict(data or {})
    unknown = sorted(set(data) - set(AnalysisPlan.__dataclass_fields__))
    if unknown:
        raise InvalidPlan(
            f"plan: unknown field(s) {', '.join(unknown)}; known: {', '.join(AnalysisPlan.__dataclass_fields__)}"
        )
    for name, kind in _TYPES.items():
        if name in data and (not isinstance(data[name], kind) or (kind is int and isinstance(data[name], bool))):
            raise InvalidPlan(f"plan.{name}: must be {kind.__name__}, got {data[name]!r}")
    if data.get("multiple_testing", "holm") not in ("holm", "bh", "none"):
        raise InvalidPlan(f"plan.multiple_testing: one of holm, bh, none, got {data['multiple_testing']!r}")
    if data.get("n_resamples", 1) < 1 or data.get("min_group_size", 1) < 1 or data.get("min_subject_group", 1) < 1:
        raise InvalidPlan("plan: n_resamples, min_group_size and min_subject_group must be at least 1")
    questions = _questions(spec)
    analyses = data.pop("analyses", None) or [{"name": PRIMARY, "by": list(by)}]
    planned = []
    for i, analysis in enumerate(analyses):
        if not isinstance(analysis, Mapping) or not isinstance(analysis.get("name"), str) or not analysis["name"]:
            raise InvalidPlan(f"plan.analyses[{i}]: an object with a name and its by questions")
        split = analysis.get("by", [])
        missing = [q for q in split if q not in questions]
        if missing:
            raise InvalidPlan(
                f"plan.analyses[{i}].by: {', '.join(missing)} not a question of the study "
                f"({', '.join(sorted(questions))})"
            )
        planned.append(PlannedAnalysis(analysis["name"], tuple(split)))
    if len({a.name for a in planned}) < len(planned):
        raise InvalidPlan("plan.analyses: each analysis needs its own name")
    generalise = data.pop("generalise", spec.get("analysis", {}).get("generalise"))
    if generalise not in (None, "none", "stimuli"):
        raise InvalidPlan(f"plan.generalise: stimuli or none, got {generalise!r}")
    sample = data.pop("sample_size", spec.get("recruitment", {}).get("target"))
    if sample is not None and (not isinstance(sample, int) or isinstance(sample, bool) or sample < 1):
        raise InvalidPlan(f"plan.sample_size: a positive whole number, got {sample!r}")
    bins = data.pop("bins", {})
    if not isinstance(bins, Mapping) or not all(isinstance(v, list) for v in bins.values()):
        raise InvalidPlan("plan.bins: column -> list of cut points")
    return AnalysisPlan(
        analyses=tuple(planned),
        generalise=None if generalise == "none" else generalise,
        sample_size=sample,
        bins={k: tuple(float(x) for x in v) for k, v in bins.items()},
        **data,
    )


def _questions(spec: dict) -> set[str]:
    names = {"language"}
    for block in spec.get("blocks", []):
        if block.get("type") == "questionnaire":
            names |= {q["key"] for q in block.get("questions", [])}
    return names


def stored_plan(data: Mapping[str, Any]) -> AnalysisPlan:
    """The plan as stored with a registration (``AnalysisPlan.as_dict``)."""
    data = dict(data)
    data["analyses"] = tuple(PlannedAnalysis(a["name"], tuple(a["by"])) for a in data["analyses"])
    data["bins"] = {k: tuple(v) for k, v in data["bins"].items()}
    return AnalysisPlan(**data)


@dataclass(frozen=True)
class Deviation:
    """One deviation (Willroth & Atherton's fields)."""

    what: str
    when: str
    why: str
    type: str
    impact: str


# parameter -> (type, impact)
_KINDS = {
    "include_incomplete": ("exclusions", "who is analysed: participants who did not complete change every estimate"),
    "include_pilot": ("exclusions", "who is analysed: pilot participants took the study before it was final"),
    "generalise": ("inference", "what the intervals of alpha generalise to (these pairs or other pairs)"),
    "multiple_testing": (
        "inference",
        "which adjusted p-values fall below .05 (the family-wise or false-discovery control)",
    ),
    "min_group_size": ("rater groups", "which rater groups are compared and which are too few"),
    "min_subject_group": ("subject groups", "which subject groups are compared and which are too few"),
    "pool_small": ("rater groups", "whether small groups are pooled into 'other' or left out"),
    "bins": ("subject groups", "how numeric subject-group columns are cut into groups"),
    "seed": ("computation", "the Monte Carlo draws of the intervals and permutation tests (not their targets)"),
    "n_resamples": ("computation", "the Monte Carlo error of the intervals and permutation p-values"),
}


def deviations_of(
    plan: AnalysisPlan,
    *,
    registered_version: int,
    version: int,
    options: Mapping[str, Any],
    when: str,
    why: str = "",
    n_analysed: int | None = None,
) -> tuple[str, list[Deviation]]:
    """(the planned analysis this run is, or "" when exploratory; its deviations). ``options``: the run's
    by, include_incomplete, include_pilot, generalise, multiple_testing, min_group_size, min_subject_group,
    pool_small, bins, seed and n_resamples; ``n_analysed``: the participants it analysed (None: not yet known)."""
    why = why.strip() or "not given"
    found: list[Deviation] = []

    def add(what: str, kind: str, impact: str) -> None:
        found.append(Deviation(what=what, when=when, why=why, type=kind, impact=impact))

    by = tuple(options.get("by", ()))
    matched = next((a.name for a in plan.analyses if tuple(a.by) == by), "")
    if not matched:
        planned = "; ".join(f"{a.name}: {' and '.join(a.by) or 'no split'}" for a in plan.analyses)
        add(
            f"rater groups by {' and '.join(by) or 'no split'}, not a planned analysis ({planned})",
            "exploratory analysis",
            "an analysis not in the plan: its tests are exploratory, not confirmatory",
        )
    if version != registered_version:
        add(
            f"study version {version} analysed; version {registered_version} was registered",
            "study",
            "participants saw a different study file than the registered one",
        )
    for name, (kind, impact) in _KINDS.items():
        planned_value = getattr(plan, name)
        actual = options.get(name, planned_value)
        if name == "bins":
            planned_value = {k: list(v) for k, v in planned_value.items()}
            actual = {k: [float(x) for x in v] for k, v in (actual or {}).items()}
        if name == "generalise" and actual == "none":
            actual = None
        if actual != planned_value:
            add(f"{name.replace('_', ' ')} {_text(actual)}; planned {_text(planned_value)}", kind, impact)
    if plan.sample_size is not None and n_analysed is not None and n_analysed != plan.sample_size:
        add(
            f"{n_analysed} participants analysed; {plan.sample_size} planned",
            "sample size",
            "the precision of every estimate and the power of every test",
        )
    return matched, found


def _text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}={','.join(map(str, v))}" for k, v in value.items()) or "default"
    return str(value)


class DeviationNeedsReason(ValueError):
    """An analysis of a registered study that deviates from the plan, started without saying why."""


def registered_deviations(study, options: Mapping[str, Any], *, why: str = "", n_analysed: int | None = None):
    """The deviations of an analysis of ``study`` with ``options`` from the study's registration, as stored in
    results.json (``registered_at``, ``registered_version``, ``manifest_sha256``, ``planned_analysis`` ("" when
    exploratory), ``follows_plan`` and ``deviations``, each with Willroth & Atherton's fields), or None when the
    study is not registered; ``participants_before``: who had answered when it was registered."""
    from runs.models import Preregistration

    registration = Preregistration.objects.select_related("study").filter(study__slug=study.slug).first()
    if registration is None:
        return None
    matched, found = deviations_of(
        stored_plan(registration.plan),
        registered_version=registration.study.version,
        version=study.version,
        options=options,
        when=timezone_now_text(),
        why=why,
        n_analysed=n_analysed,
    )
    return {
        "registered_at": registration.registered_at.isoformat(),
        "registered_version": registration.study.version,
        "manifest_sha256": registration.manifest_sha256,
        "participants_before": registration.participants_before,
        "planned_analysis": matched,
        "follows_plan": not found,
        "deviations": [asdict(d) for d in found],
    }


def exploratory_deviations(study, *, what: str, why: str = ""):
    """A run of a registered study that is not an ``analyze_study`` analysis (``what``: a model audit, a
    differential-parity run), as its report states it: not in the plan (a plan names only ``analyze_study``'s
    analyses), so exploratory; None when the study is not registered."""
    stated = registered_deviations(study, {}, why=why)
    if stated is None:
        return None
    audit = Deviation(
        what=f"{what}, not an analysis of the registered plan",
        when=timezone_now_text(),
        why=why.strip() or "not given",
        type="exploratory analysis",
        impact="its estimates and tests are exploratory, not confirmatory",
    )
    return {**stated, "planned_analysis": "", "follows_plan": False, "deviations": [asdict(audit)]}


def check_reason(study, options: Mapping[str, Any], why: str) -> None:
    """Refuse (DeviationNeedsReason) an analysis of a registered study that deviates from its plan in its
    options while ``why`` is empty: the researcher says why before it runs (the sample size is known after)."""
    stated = registered_deviations(study, options, why=why)
    if stated and stated["deviations"] and not why.strip():
        listed = "; ".join(d["what"] for d in stated["deviations"])
        raise DeviationNeedsReason(
            f"{study.slug} is preregistered and this analysis deviates from the plan ({listed}): say why "
            "(--deviation-reason TEXT, or the form's reason field); the report lists every deviation with it"
        )


def timezone_now_text() -> str:
    from django.utils import timezone

    return timezone.now().isoformat(timespec="seconds")
