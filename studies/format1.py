"""Format 1 study files (the effort-aware fairness study) written as format 2 blocks.

:func:`format1_to_format2` takes a validated format 1 file (``studies.study_file.validate_study``,
defaults filled in) and returns the format 2 file that asks the same questions of the same subjects,
per condition and in the same order of parts:

* each condition's subjects become a pool (key: the condition's key): ``series``, ``demographics``
  as ``groups``, the AI's ``risk_score`` and ``label`` as model ``ai``, the condition's ``feature``,
  ``unit`` and ``time_labels`` as its chart, the subject's id as its profile text; the subjects of
  the condition's disagreement prompts also form a pool ``<condition>-prompts`` (an ``agree`` block
  asks about every subject of its pool);
* the instructions page, then per condition and stimulus set (file order) a ``pair_distance`` block
  over the set's pairs (reference K, comparison X, ``relation``) with the study's Likert scale, BTS
  questions and rationale factors, followed by a ``fair_score`` block over that set (model ``ai``,
  the condition's ``risk_label``); then an ``agree`` block over the prompts' subjects ("The AI rates
  this person high / low risk. Do you agree?") asking them all on one page (``one_page``), each
  keeping its prompt key (``item_keys``; a subject of two prompts keeps the first's);
* each attention check becomes an ``attention`` block ``among`` the condition's pair-distance blocks,
  after the participant's ``after_pair``-th pair of them (:func:`attention_slots`, the rule format 1
  plans use), listed before the condition's sets; ``exclude_if_failed`` / ``return_if_failed`` become
  ``attention``;
* the stimulus sets (each a unit of its two blocks) are shown in an order drawn per participant, as in
  format 1 (a ``shuffle`` per condition);
* the condition's ``context`` sentence is each of its task blocks' ``intro`` (shown on every page);
* slug, title, description, consent, completion, prolific, screening, quotas (over the screening
  answer), time limit, bonus, analysis options, telemetry and quality rules are kept (``KEPT``), and
  so are the conditions' ``desirable`` and ``aggregate_scale``.

Every converted task and attention block has ``page_key`` (the format 1 part it was, with its set or
check key), so its pages, answers and exports keep format 1's keys (``tasks.questions``; see the
docs, "Study file format 1").
"""

from collections.abc import Iterator

AI_MODEL = "ai"
LIKERT_MEASURES = ("trajectory", "aggregate", "overall")
MAX_KEY = 40  # tasks.schema.KEY_PATTERN
KEPT = (  # the top-level parts both formats share (with slug and title: studies.format2's schema), kept as they are
    "description",
    "consent",
    "completion",
    "prolific",
    "screening",
    "quotas",
    "time_limit",
    "bonus",
    "analysis",
    "telemetry",
    "quality",
)


def attention_slots(checks: list[dict], n_pairs: int) -> dict[int, list[dict]]:
    """Attention checks by the number of pairs after which they come: ``after_pair``, or by default
    spread evenly, check i of n after round((i + 1) * n_pairs / (n + 1)) pairs (at most ``n_pairs``)."""
    slots: dict[int, list[dict]] = {}
    for i, check in enumerate(checks):
        after = check.get("after_pair", round((i + 1) * n_pairs / (len(checks) + 1)))
        slots.setdefault(min(after, n_pairs), []).append(check)
    return slots


def _key(*parts: str, fallback: str) -> str:
    """``parts`` joined by '-', or ``fallback`` when that is longer than a key may be."""
    key = "-".join(parts)
    return key if len(key) <= MAX_KEY else fallback


def _pool(condition: dict, key: str, subject_ids: list[str] | None = None) -> dict:
    chart = {"feature": condition["feature"], "unit": condition["unit"], "time_labels": condition["time_labels"]}
    subjects = condition["subjects"]
    if subject_ids is not None:
        by_id = {s["id"]: s for s in subjects}
        subjects = [by_id[i] for i in dict.fromkeys(subject_ids)]
    return {
        "key": key,
        "subject_noun": "person",
        "display": {"chart": chart},  # pages name the people "Person A", "Person B", ... (tasks.labels), not by id
        "subjects": [
            {
                "id": s["id"],
                "series": s["series"],
                "groups": s["demographics"],
                "models": {AI_MODEL: {"score": s["risk_score"], "label": s["label"]}},
            }
            for s in subjects
        ],
    }


def _attention_block(check: dict, condition: str, key: str) -> dict:
    return {
        "key": key,
        "type": "attention",
        "conditions": [condition],
        "question": check["question"],
        "options": check["options"],
        "correct": check["correct"],
        "page_key": {"block": "attention", "key": check["key"]},
    }


def _set_units(ci: int, condition: dict) -> list[list[str]]:
    """Each stimulus set's pair-distance and fair-score block keys (:func:`_condition_blocks`' keys)."""
    units = []
    for si, sset in enumerate(condition["stimulus_sets"]):
        pairs_key = _key(condition["key"], sset["key"], fallback=f"c{ci + 1}-s{si + 1}")
        units.append([pairs_key, _key(pairs_key, "output", fallback=f"c{ci + 1}-s{si + 1}-output")])
    return units


def _condition_blocks(spec: dict, ci: int, condition: dict, checks: list[dict]) -> Iterator[dict]:
    """One condition's task and attention blocks (attention blocks keyed ``<check>-<condition>``
    when there are several conditions, so that keys stay unique)."""
    key = condition["key"]
    only = [key]
    shown = {"intro": condition["context"]} if condition["context"] else {}  # on each of the block's pages
    n_pairs = sum(len(s["comparisons"]) for s in condition["stimulus_sets"])
    several = len(spec["conditions"]) > 1
    units = _set_units(ci, condition)
    among = [pairs_key for pairs_key, _ in units]
    for after, slot in sorted(attention_slots(checks, n_pairs).items()):
        for check in slot:
            name = _key(check["key"], key, fallback=f"{check['key'][:30]}-c{ci + 1}") if several else check["key"]
            yield _attention_block(check, key, name) | {"among": {"blocks": among, "after_items": after}}
    for sset, (pairs_key, output_key) in zip(condition["stimulus_sets"], units, strict=True):
        reference = sset["reference"]
        block = {
            "key": pairs_key,
            "type": "task",
            "task": "pair_distance",
            "pool": key,
            "conditions": only,
            **shown,
            "pairs": [{"a": reference, "b": c["subject"], "relation": c["relation"]} for c in sset["comparisons"]],
            "measures": list(LIKERT_MEASURES),
            "likert": spec["likert"],
            "rationale_factors": spec["rationale_factors"],
            "page_key": {"block": "pairs", "key": sset["key"]},
        }
        if spec["bts"]["questions"]:
            block["bts"] = {"prompt": spec["bts"]["prompt"], "measures": spec["bts"]["questions"]}
        yield block
        yield {
            "key": output_key,
            "type": "task",
            "task": "fair_score",
            "pool": key,
            "conditions": only,
            **shown,
            "model": AI_MODEL,
            "risk_label": condition["risk_label"],
            "page_key": {"block": "output", "key": sset["key"]},
            "sets": [
                {"key": sset["key"], "reference": reference, "comparisons": [c["subject"] for c in sset["comparisons"]]}
            ],
        }
    if condition["disagreement_prompts"]:
        item_keys: dict[str, str] = {}
        for prompt in condition["disagreement_prompts"]:
            item_keys.setdefault(prompt["subject"], prompt["key"])
        yield {
            "key": _key(key, "disagreement", fallback=f"c{ci + 1}-disagreement"),
            "type": "task",
            "task": "agree",
            "pool": _prompt_pool_key(ci, condition),
            "conditions": only,
            **shown,
            "model": AI_MODEL,
            "question": "The AI rates this {subject_noun} {prediction}. Do you agree?",
            "label_names": {"1": "high risk", "0": "low risk"},
            "one_page": True,
            "item_keys": item_keys,
            "page_key": {"block": "disagreement"},
        }


def _prompt_pool_key(ci: int, condition: dict) -> str:
    return _key(condition["key"], "prompts", fallback=f"c{ci + 1}-prompts")


def format1_to_format2(spec: dict) -> dict:
    """The format 2 study file of a validated format 1 file ``spec`` (see the module docstring)."""
    checks = spec["attention_checks"]
    out: dict = {"format": 2, "slug": spec["slug"], "title": spec["title"]}
    for name in KEPT:
        if name in spec:
            out[name] = spec[name]
    out["conditions"] = [
        {name: c[name] for name in ("key", "label", "desirable", "aggregate_scale")} for c in spec["conditions"]
    ]
    attention = {name: checks[name] for name in ("exclude_if_failed", "return_if_failed") if name in checks}
    if checks["items"]:
        out["attention"] = attention
    pools = []
    for ci, condition in enumerate(spec["conditions"]):
        pools.append(_pool(condition, condition["key"]))
        prompts = [p["subject"] for p in condition["disagreement_prompts"]]
        if prompts:
            pools.append(_pool(condition, _prompt_pool_key(ci, condition), prompts))
    out["pools"] = pools
    blocks = [{"key": "instructions", "type": "instructions", "text": spec["instructions"]}]
    for ci, condition in enumerate(spec["conditions"]):
        blocks += _condition_blocks(spec, ci, condition, checks["items"])
    out["blocks"] = blocks
    shuffles = [_set_units(ci, c) for ci, c in enumerate(spec["conditions"]) if len(c["stimulus_sets"]) > 1]
    if shuffles:  # the sets in an order drawn per participant, as format 1 plans do
        out["shuffle"] = [{"units": units} for units in shuffles]
    return out


def converted_plan(spec: dict, condition: str, plan: list[dict]) -> list[dict]:
    """A format 1 participant's stored ``plan`` as pages of ``spec``, the study's conversion
    (:func:`format1_to_format2`, validated): each page keeps its key and its place, and becomes the page
    dict the format 2 runtime makes for the converted block (found by its ``page_key``): a pair page of
    the set's ``pair_distance`` block (item ``K~X``, ``position`` the pair's place in the set), the set's
    ``fair_score`` page, the one ``agree`` page (items: the prompts' subjects in the participant's
    order), an ``attention`` page; the instructions and screening pages as they are."""
    blocks = {}
    for block in spec["blocks"]:
        keys = block.get("page_key")
        if keys is not None and condition in block["conditions"]:
            blocks[(keys["block"], keys.get("key", ""))] = block
    pages = []
    for page in plan:
        kind, key = page["kind"], page["key"]
        if kind == "likert":
            block = blocks[("pairs", page["set"])]
            reference = next(p["a"] for p in block["pairs"] if p["b"] == page["subject"])
            item = f"{reference}~{page['subject']}"
            pages.append(
                {"key": key, "kind": "pair_distance", "block": block["key"], "item": item}
                | {"position": page["pair_position"], "measure": page["measure"]}
            )
        elif kind == "output":
            block = blocks[("output", page["set"])]
            pages.append(
                {"key": key, "kind": "fair_score", "block": block["key"], "item": page["set"], "position": 0}
                | {"subjects": page["subjects"]}  # in the order of the set's pairs, as build_plan_v2 gives them
            )
        elif kind == "disagreement":
            block = blocks[("disagreement", "")]
            subjects = {prompt: subject for subject, prompt in block["item_keys"].items()}
            items = list(dict.fromkeys(subjects[prompt] for prompt in page["prompts"] if prompt in subjects))
            pages.append({"key": key, "kind": "agree", "block": block["key"], "items": items, "position": 0})
        elif kind == "attention":
            pages.append({"key": key, "kind": "attention", "block": blocks[("attention", page["check"])]["key"]})
        elif kind == "instructions":
            pages.append({"key": key, "kind": "instructions", "block": "instructions"})
        else:  # screening
            pages.append(page)
    return pages
