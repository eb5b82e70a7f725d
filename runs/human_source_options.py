"""The audit's options that read what people said in a study (no scientific imports: the web form lists them).

Each source option needs one yield (``tasks.yields.Yield``) and takes a block of any task type that declares it
(``BlockTask.yields``, asked of the registry: ``tasks.yielding``). A new source option is one entry of
:data:`OPTIONS` (its command option, API field and form select follow) with its field in
``runs.audit_parameters.AuditParameters`` and what the audit does with it (``runs.human_sources.human_audit_of``)."""

import math
from dataclasses import dataclass

from tasks import yielding
from tasks.yields import Yield


@dataclass(frozen=True)
class SourceOption:
    """An audit option that reads a study's block: the command's ``flag``, the yield its block must give
    (``needs``), the audit form's ``label`` and what the audit does with it (``does``: the form's hint)."""

    flag: str
    needs: Yield
    label: str
    does: str

    @property
    def tasks(self) -> tuple[str, ...]:
        """The task types whose blocks it takes: those that declare :attr:`needs` (the registry's, now)."""
        return yielding(self.needs)

    @property
    def reads(self) -> str:
        """What it reads, in words: "a block that yields a learned fair metric (pair_comparable, triplet)"."""
        return f"a block that yields {self.needs.meaning} ({', '.join(self.tasks) or 'no task type yet'})"

    @property
    def help(self) -> str:
        """The command's, the API's and the form's help text."""
        return f"{self.does} SLUG[:BLOCK] names {self.reads}."


# option (the API's and the form's field name, an AuditParameters field) -> what it reads and does
OPTIONS: dict[str, SourceOption] = {
    "metric_from": SourceOption(
        "--metric-from",
        Yield.METRIC,
        "Human metric from",
        "Individual fairness under the fair metric learned from these judgements.",
    ),
    "utility_from": SourceOption(
        "--utility-from",
        Yield.UTILITIES,
        "Stakeholders' utility from",
        "Rank correlation of each model with the utility model of choices.",
    ),
    "features_from": SourceOption(
        "--features-from",
        Yield.FEATURE_SHARES,
        "Feature fairness from",
        "Each model's reliance on the features people judged unfair to use.",
    ),
    "tradeoff_from": SourceOption(
        "--tradeoff-from",
        Yield.TRADEOFF_WEIGHTS,
        "Trade-off weights from",
        "Each model scored by the weights people's choices between models gave its accuracy and its false positive, "
        "false negative and selection-rate gaps between groups on the audited subjects (needs the outcome column).",
    ),
}
LIPSCHITZ = "lipschitz"  # the Lipschitz constant L of the audit under the human metric (--lipschitz)
SURROGATE = "surrogate"  # the model standing in for each audited model's scores under --features-from (--surrogate)
# the surrogates and their names in the form: fairness.human_audit.SURROGATES (not imported here: scipy)
SURROGATES = {
    "linear": "Linear regression",
    "forest": "Random forest (interactions)",
}


def lipschitz_problem(value: object) -> str | None:
    """Why ``value`` cannot be the audit's L (a finite number > 0, in the scores' units per unit of
    human-metric distance), or None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return None
    return (
        f"--lipschitz must be a finite number > 0 (the scores' units per unit of human-metric distance), not {value!r}"
    )


def surrogate_problem(value: object) -> str | None:
    """Why ``value`` cannot be the audit's surrogate (one of :data:`SURROGATES`), or None."""
    if value in SURROGATES:
        return None
    return f"--surrogate must be {' or '.join(SURROGATES)}, not {value!r}"


def parameter_problems(*, lipschitz: object, surrogate: object) -> dict[str, list[str]]:
    """The audit's parameters that are not sources (L and the surrogate): each field's problem."""
    problems = {LIPSCHITZ: lipschitz_problem(lipschitz), SURROGATE: surrogate_problem(surrogate)}
    return {name: [problem] for name, problem in problems.items() if problem}
