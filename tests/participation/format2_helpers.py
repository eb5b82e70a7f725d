"""A format 2 study for the participant runtime's tests, and a plan in the contract's page shape
(every block in file order, every item; the real assignment lives in ``participation.assignment``)."""

import json
from pathlib import Path

from studies.content import study_content
from studies.study_file import validate_study

EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "format2_example.json"


def example_spec() -> dict:
    return validate_study(json.loads(EXAMPLE.read_text()))


def simple_plan(spec: dict, condition_key: str, seed: int = 0) -> list[dict]:
    """Every block shown in the condition, in file order; every item of a task block in file order."""
    content = study_content(spec, f"simple-plan-{id(spec)}")
    pages: list[dict] = [{"key": "screening", "kind": "screening"}] if spec.get("screening") else []
    for block in spec["blocks"]:
        key = block["key"]
        if condition_key not in block["conditions"]:
            continue
        if block["type"] != "task":
            pages.append({"key": key, "kind": block["type"], "block": key})
            continue
        for position, item in enumerate(content.items(key)):
            page = {"key": f"{key}/{item}", "kind": block["task"], "block": key, "item": item, "position": position}
            if block["task"] == "pair_distance":
                for measure in block["measures"]:
                    pages.append({**page, "key": f"{key}/{item}/{measure}", "measure": measure})
            else:
                pages.append(page)
    return pages
