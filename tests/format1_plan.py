"""The format 1 plan as participation.plan built it before format 1 files were converted at load (issue 20,
item 4): the oracle the conversion's tests compare the converted plans with (same pages, same random
stream).

Order (effort-aware fairness paper, "Experimental Design" and Appendix E): the study file's
screening question when it has one; instructions; then for each stimulus set, in an order randomised
per participant, its pairs (K, X) in random order, each pair as three pages (trajectory, aggregate,
overall distance); after a set's pairs, its output-space page; then the yes/no disagreement block
(prompts in random order). Attention checks are inserted after the pair given by ``after_pair``
(counted over the participant's pairs), or, by default, spread evenly among the pairs.
"""

import numpy as np

from studies.format1 import attention_slots

PAIR_MEASURES = ("trajectory", "aggregate", "overall")


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
