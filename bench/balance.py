"""The balance a burst of consents left behind, read from the database: participants per condition
and, per task block and stratum, judgements per item (how many consented participants' plans hold the
item). The assignment keeps judgements within one of each other inside a stratum; strata of
different sizes differ by design (every participant gets the same number of items of each value).

Run with the server's environment (DATABASE_URL ...): .venv/bin/python bench/balance.py SLUG
(bench/launch.py --scenario burst runs it). Pilots are left out, as the assignment leaves them out.
"""

import os
import sys
from collections import Counter
from pathlib import Path

# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [
    str(Path(__file__).resolve().parent.parent),
    *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent),
]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from participation.models import Participant  # noqa: E402
from studies.content import study_content  # noqa: E402
from studies.services import latest_study  # noqa: E402


def main(slug: str) -> None:
    consented = Participant.objects.filter(study__slug=slug, pilot=False, condition__isnull=False)
    conditions = Counter(consented.values_list("condition__key", flat=True))
    print(f"participants per condition: {dict(sorted(conditions.items()))}")
    judgements: dict[str, Counter] = {}
    for plan in consented.values_list("plan", flat=True):
        items = {
            (page["block"], item)  # a one_page block's page lists its items
            for page in plan
            if "block" in page
            for item in page.get("items", [page["item"]] if "item" in page else [])
        }
        for block, item in items:
            judgements.setdefault(block, Counter())[item] += 1
    study = latest_study(slug)
    content = study_content(study.spec, study.spec_hash)
    for block, counts in sorted(judgements.items()):
        strata = content.strata(block)
        for value, items in sorted(strata.items()):
            seen = [counts[item] for item in items]
            print(
                f"block {block}{f' stratum {value}' if value else ''}: {len(items)} items, judgements per "
                f"item min {min(seen)} / max {max(seen)} (spread {max(seen) - min(seen)})"
            )
    if not judgements:
        print("no sampled task blocks (every participant judges every item)")


if __name__ == "__main__":
    main(sys.argv[1])
