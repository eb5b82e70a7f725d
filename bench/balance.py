"""The balance a burst of consents left behind, read from the database: participants per condition
and, per task block, judgements per item (how many consented participants' plans hold the item).

Run with the server's environment (DATABASE_URL ...): .venv/bin/python bench/balance.py SLUG
(bench/launch.py --scenario burst runs it). Pilots are left out, as the assignment leaves them out.
"""

import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from surveys.models import Participant  # noqa: E402


def main(slug: str) -> None:
    consented = Participant.objects.filter(study__slug=slug, pilot=False, condition__isnull=False)
    conditions = Counter(consented.values_list("condition__key", flat=True))
    print(f"participants per condition: {dict(sorted(conditions.items()))}")
    judgements: dict[str, Counter] = {}
    for plan in consented.values_list("plan", flat=True):
        items = {(page["block"], page["item"]) for page in plan if "item" in page and "block" in page}
        for block, item in items:
            judgements.setdefault(block, Counter())[item] += 1
    for block, counts in sorted(judgements.items()):
        print(
            f"block {block}: {len(counts)} items judged, judgements per item min {min(counts.values())} / "
            f"max {max(counts.values())} (spread {max(counts.values()) - min(counts.values())})"
        )
    if not judgements:
        print("no sampled task blocks (every participant judges every item)")


if __name__ == "__main__":
    main(sys.argv[1])
