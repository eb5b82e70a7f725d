"""A format 2 study for bench/launch.py --scenario burst: 200 synthetic defendant profiles (seeded),
two conditions, an agree task with 20 items per participant stratified by group (10 per value).

Run: .venv/bin/python bench/burst_study.py OUT.json, then bench/launch.py --scenario burst --study OUT.json
"""

import json
import sys
from pathlib import Path

import numpy as np

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]

from core.strict_json import StrictJSONEncoder  # noqa: E402


def burst_study(subjects: int = 200, per_participant: int = 20, seed: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    pool = [
        {
            "id": f"d{i:03d}",
            "features": {"age": int(rng.integers(18, 70)), "priors": int(rng.integers(0, 10))},
            "groups": {"group": "A" if i % 2 else "B"},
            "models": {"ai": {"label": int(rng.integers(0, 2))}},
        }
        for i in range(subjects)
    ]
    return {
        "format": 2,
        "slug": "burst-demo",
        "title": "Burst benchmark (format 2)",
        "consent": {"text": "A benchmark study."},
        "completion": {"code": "BURST1"},
        "seed": seed,
        "conditions": [{"key": "shown", "label": "Shown"}, {"key": "hidden", "label": "Hidden"}],
        "pools": [
            {
                "key": "people",
                "subject_noun": "defendant",
                "subjects": pool,
                "display": {"profile": "Aged {age}, {priors} prior convictions."},
            }
        ],
        "blocks": [
            {"key": "intro", "type": "instructions", "text": "Say whether you agree with the AI."},
            {
                "key": "judge",
                "type": "task",
                "task": "agree",
                "pool": "people",
                "model": "ai",
                "assignment": {"per_participant": per_participant, "stratify_by": "group"},
            },
            {
                "key": "check",
                "type": "attention",
                "question": "Choose 'Blue'.",
                "options": ["Red", "Blue"],
                "correct": "Blue",
            },
        ],
    }


if __name__ == "__main__":
    with open(sys.argv[1], "w") as out:
        json.dump(burst_study(), out, indent=1, cls=StrictJSONEncoder)
