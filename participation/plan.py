"""The ordered pages one participant sees, drawn from the study and the participant's seed.

Order (effort-aware fairness paper, "Experimental Design" and Appendix E): the study file's
screening question when it has one (an ineligible answer ends the study there); instructions; then for
each stimulus set, in an order randomised per participant, its pairs (K, X) in random order, each
pair as three pages (trajectory, aggregate, overall distance); after a set's pairs, its
output-space page; then the yes/no disagreement block (prompts in random order). Attention checks
are inserted after the pair given by ``after_pair`` (counted over the participant's pairs), or, by
default, spread evenly among the pairs. The plan is stored on the participant, so a later change of
this code never changes what a participant already saw.
"""

import numpy as np

from studies.format1 import attention_slots

PAIR_MEASURES = ("trajectory", "aggregate", "overall")
# Page fields that record where a page fell in this participant's order; they do not change what
# the page shows (its key, kind, set, subjects, prompts and check do).
ORDER_FIELDS = ("set_position", "pair_position")


def build_plan(spec: dict, condition_key: str, seed: int) -> list[dict]:
    """Pages as dicts with ``key`` (unique), ``kind`` and what the page needs to render."""
    rng = np.random.default_rng(seed)
    condition = next(c for c in spec["conditions"] if c["key"] == condition_key)
    sets = [condition["stimulus_sets"][i] for i in rng.permutation(len(condition["stimulus_sets"]))]
    n_pairs = sum(len(s["comparisons"]) for s in sets)
    slots = attention_slots(spec.get("attention_checks", {}).get("items", []), n_pairs)

    pages: list[dict] = [{"key": "screening", "kind": "screening"}] if spec.get("screening") else []
    pages.append({"key": "instructions", "kind": "instructions"})

    def add_checks(after_pair: int) -> None:
        for check in slots.get(after_pair, []):
            pages.append({"key": f"attention/{check['key']}", "kind": "attention", "check": check["key"]})

    add_checks(0)
    pair_index = 0
    for set_position, sset in enumerate(sets):
        order = [sset["comparisons"][i]["subject"] for i in rng.permutation(len(sset["comparisons"]))]
        for pair_position, subject in enumerate(order):
            for measure in PAIR_MEASURES:
                pages.append(
                    {
                        "key": f"pair/{sset['key']}/{subject}/{measure}",
                        "kind": "likert",
                        "measure": measure,
                        "set": sset["key"],
                        "set_position": set_position,
                        "subject": subject,
                        "pair_position": pair_position,
                    }
                )
            pair_index += 1
            add_checks(pair_index)
        pages.append({"key": f"output/{sset['key']}", "kind": "output", "set": sset["key"], "subjects": order})
    prompts = condition.get("disagreement_prompts", [])
    if prompts:
        order = [prompts[i]["key"] for i in rng.permutation(len(prompts))]
        pages.append({"key": "disagreement", "kind": "disagreement", "prompts": order})
    return pages


def plan_for(
    spec: dict, condition_key: str, seed: int, item_choice: dict[str, list[str]] | None = None, content=None
) -> list[dict]:
    """The participant's pages for either study file format (format 2: ``participation.assignment``,
    with the sampled blocks' ``item_choice``, every item of the others; ``content``: the file's
    ``studies.content.StudyContent`` when the caller has it)."""
    if spec.get("format", 1) == 2:
        from participation.assignment import build_plan_v2
        from studies.content import study_content
        from studies.services import spec_digest

        content = content or study_content(spec, spec_digest(spec))
        return build_plan_v2(spec, content, condition_key, seed, item_choice or {})
    return build_plan(spec, condition_key, seed)
