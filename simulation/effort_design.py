"""The effort design of a format 2 study file, as the planning simulation reads it (pure, stdlib only: the
API checks a plan request with it without loading the scientific stack).

A condition's effort design is its ``pair_distance`` blocks that rate all of trajectory, aggregate and
overall (``EFFORT_MEASURES``) over subjects with a ``series``, in file order: each is a stimulus set of
the pairs table (``set``: the format 1 set a converted block was, ``page_key.key``, else the block's
key; the same name ``tasks.questions.block_set`` gives the export's pairs table), with its pairs (a, b)
in file order. A pair's fair scores are asked when a ``fair_score`` block of the condition over the same
pool has a set with reference a and comparison b (the export's rule, ``tasks.pair_distance``); the
subjects' risk scores and labels are that block's ``model``'s. The scale, the BTS measures and the
rationale factors are those of the condition's first effort block. A study converted from format 1 has
one such block per condition and stimulus set, in format 1's order, with one fair-score set each.
"""

from dataclasses import dataclass

EFFORT_MEASURES = ("trajectory", "aggregate", "overall")
MIN_PAIRS = 3  # distinct stimulus pairs per condition: Eq. 5's intercept and two slopes


@dataclass(frozen=True)
class EffortSet:
    """One effort block: the pairs table's ``key`` (its set), its ``pairs`` (a, b) in file order, and
    ``fair_scores``: reference a -> the comparisons b whose fair scores a fair_score set of a asks."""

    key: str
    pairs: tuple[tuple[str, str], ...]
    fair_scores: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class EffortCondition:
    """A condition's effort design: its ``sets``, the ``subjects`` their pairs show (``id``, ``series``
    and, with a fair-score block, ``risk_score`` and ``label``), and ``scale``, what a simulated
    participant reads of the file (``likert``, ``rationale_factors``, ``bts.questions``)."""

    key: str
    desirable: bool
    sets: tuple[EffortSet, ...]
    subjects: tuple[dict, ...]
    scale: dict


def _is_effort(block: dict, pools: dict) -> bool:
    return (
        block["type"] == "task"
        and block["task"] == "pair_distance"
        and set(EFFORT_MEASURES) <= set(block["measures"])
        and all("series" in s for s in pools[block["pool"]]["subjects"])
    )


def effort_conditions(spec: dict) -> list[EffortCondition]:
    """The effort design (module doc) of every condition of the validated format 2 file ``spec`` that
    has one, in file order; ValueError naming the study's task blocks when no condition has one, or the
    conditions whose design has fewer than ``MIN_PAIRS`` distinct pairs (no slopes to estimate)."""
    pools = {pool["key"]: pool for pool in spec["pools"]}
    blocks = [b for b in spec["blocks"] if b["type"] == "task"]
    out = []
    for condition in spec["conditions"]:
        shown = [b for b in blocks if condition["key"] in b["conditions"]]
        effort = [b for b in shown if _is_effort(b, pools)]
        if not effort:
            continue
        models: dict[str, str] = {}  # subject id -> the model of the fair-score block that asks about it
        sets = []
        for block in effort:
            pairs = tuple((pair["a"], pair["b"]) for pair in block["pairs"])
            scored: dict[str, list[str]] = {}
            for a, b in pairs:
                fair = next(
                    (
                        f
                        for f in shown
                        if f["task"] == "fair_score"
                        and f["pool"] == block["pool"]
                        and any(s["reference"] == a and b in s["comparisons"] for s in f["sets"])
                    ),
                    None,
                )
                if fair is not None:
                    scored.setdefault(a, []).append(b)
                    models.update(dict.fromkeys((a, b), fair["model"]))
            key = block.get("page_key", {}).get("key", block["key"])
            sets.append(EffortSet(key, pairs, {a: tuple(bs) for a, bs in scored.items()}))
        subjects: dict[str, dict] = {}
        for pool in dict.fromkeys(b["pool"] for b in effort):
            for s in pools[pool]["subjects"]:
                output = s.get("models", {}).get(models.get(s["id"], ""), {})
                extra = {"risk_score": output["score"], "label": output.get("label")} if output else {}
                subjects.setdefault(s["id"], {"id": s["id"], "series": s["series"], **extra})
        first = effort[0]
        scale = {
            "likert": first["likert"],
            "rationale_factors": first["rationale_factors"],
            "bts": {"questions": first.get("bts", {}).get("measures", [])},
        }
        out.append(
            EffortCondition(
                condition["key"], bool(condition.get("desirable", False)), tuple(sets), tuple(subjects.values()), scale
            )
        )
    few = [
        f"{c.key!r} rates {n} distinct pair{'s' if n != 1 else ''}"
        for c in out
        for n in [len({frozenset(pair) for s in c.sets for pair in s.pairs})]
        if n < MIN_PAIRS
    ]
    if few:
        raise ValueError(
            "plan_study estimates alpha from how the overall ratings vary with d_S and d_E over a condition's "
            f"stimulus pairs, which needs at least {MIN_PAIRS} distinct pairs per condition: {'; '.join(few)}"
        )
    if not out:
        tasks = ", ".join(f"{b['key']} ({b['task']})" for b in blocks) or "none"
        raise ValueError(
            "plan_study simulates the effort design: pair_distance blocks rating "
            f"{', '.join(EFFORT_MEASURES)} over subjects with a series; this study has none (its task blocks: "
            f"{tasks})"
        )
    return out
