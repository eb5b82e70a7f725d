"""What each page kind shows and which form it uses, read from the study file (no queries)."""

from dataclasses import dataclass

from participation.forms import (
    AttentionPageForm,
    DisagreementPageForm,
    InstructionsForm,
    LikertPageForm,
    OutputPageForm,
    ScreeningPageForm,
)


@dataclass(frozen=True)
class ConditionIndex:
    """Lookups into one condition of a validated study file."""

    spec: dict
    condition: dict
    subjects: dict
    sets: dict
    prompts: dict
    checks: dict

    def chart(self, *subject_ids: str) -> dict:
        """Data for a Plotly line chart of the subjects' yearly (non-cumulative) series."""
        cond = self.condition
        return {
            "x": cond["time_labels"],
            "traces": [{"name": s, "y": self.subjects[s]["series"]} for s in subject_ids],
            "ytitle": f"{cond['feature']} ({cond['unit']})",
            "description": "; ".join(
                f"{s}: "
                + ", ".join(
                    f"{label} {value:g}"
                    for label, value in zip(cond["time_labels"], self.subjects[s]["series"], strict=True)
                )
                for s in subject_ids
            ),
        }

    def total(self, subject_id: str) -> float:
        return sum(self.subjects[subject_id]["series"])


_INDEX_CACHE: dict[tuple[str, str], ConditionIndex] = {}


def condition_index(spec: dict, spec_hash: str, condition_key: str) -> ConditionIndex:
    """Lookups for one condition, cached by the study file's digest (a stored spec never changes)."""
    cache_key = (spec_hash, condition_key)
    if cache_key not in _INDEX_CACHE:
        condition = next(c for c in spec["conditions"] if c["key"] == condition_key)
        subjects = {s["id"]: s for s in condition["subjects"]}
        _INDEX_CACHE[cache_key] = ConditionIndex(
            spec=spec,
            condition=condition,
            subjects=subjects,
            sets={s["key"]: s for s in condition["stimulus_sets"]},
            prompts={
                p["key"]: {"subject": p["subject"], "label": subjects[p["subject"]]["label"]}
                for p in condition["disagreement_prompts"]
            },
            checks={c["key"]: c for c in spec["attention_checks"]["items"]},
        )
    return _INDEX_CACHE[cache_key]


def likert_question(page: dict, index: ConditionIndex) -> str:
    sset = index.sets[page["set"]]
    k, x = sset["reference"], page["subject"]
    feature = index.condition["feature"]
    steps = len(index.condition["time_labels"])
    return {
        "trajectory": f"How different are the trajectories (the trends over the years) of {feature} of {k} and {x}?",
        "aggregate": f"How different are the totals of {feature} of {k} and {x}, summed over the {steps} years?",
        "overall": f"Overall, how different are {k} and {x} in terms of their {feature}?",
    }[page["measure"]]


def page_form(page: dict, index: ConditionIndex, data=None):
    kind = page["kind"]
    if kind == "instructions":
        return InstructionsForm(data)
    if kind == "likert":
        return LikertPageForm(data, page=page, spec=index.spec, question=likert_question(page, index))
    if kind == "output":
        return OutputPageForm(data, page=page, reference=index.sets[page["set"]]["reference"])
    if kind == "disagreement":
        return DisagreementPageForm(data, page=page, prompts=index.prompts)
    if kind == "attention":
        return AttentionPageForm(data, check=index.checks[page["check"]])
    if kind == "screening":
        return ScreeningPageForm(data, screening=index.spec["screening"])
    raise ValueError(f"unknown page kind {kind!r}")


def form_answers(page: dict, index: ConditionIndex, form):
    if page["kind"] == "output":
        reference = index.sets[page["set"]]["reference"]
        return form.answers(ai_score=index.subjects[reference]["risk_score"])
    return form.answers()


def page_context(page: dict, index: ConditionIndex) -> dict:
    """Template name and the data it needs, beyond the form."""
    cond = index.condition
    kind = page["kind"]
    ctx: dict = {"condition": cond, "unit": cond["unit"]}
    if kind == "instructions":
        ctx["instructions"] = index.spec["instructions"]
    elif kind == "likert":
        k = index.sets[page["set"]]["reference"]
        x = page["subject"]
        ctx.update(reference=k, subject=x, chart=index.chart(k, x))
        if page["measure"] == "aggregate":
            ctx["totals"] = [(k, index.total(k)), (x, index.total(x))]
    elif kind == "output":
        k = index.sets[page["set"]]["reference"]
        ctx.update(
            reference=k,
            ai_score=round(index.subjects[k]["risk_score"] * 100, 1),
            reference_chart=index.chart(k),
            comparisons=[{"subject": x, "chart": index.chart(k, x)} for x in page["subjects"]],
        )
    elif kind == "disagreement":
        ctx["prompt_charts"] = {key: index.chart(index.prompts[key]["subject"]) for key in page["prompts"]}
    return {"template": f"surveys/page_{kind}.html", **ctx}
