"""Contamination benchmark: scripted bot participants against human-like ones on the bundled
disagreement study with a detection item of each check (``tasks.detection``), through the participant
pages (Django's test client, the views a browser uses) on a virtual clock (``django.utils.timezone.now``
advanced by each client's time on the page, so hours of human reading take seconds).

Clients (each page's answers from its task type's ``simulate`` with a drawn rater, then changed as
the client's kind would):

* ``bot``: a naive LLM-driven bot at machine speed (0.3-1.5 s a page): it reads the page's text, so it
  follows the hidden instruction and answers the reverse shibboleth; it pastes the sentence of the copy
  item (and would paste any free text); it agrees with every AI prediction (language-model answers are
  homogeneous) and passes the attention checks (Westwood 2025).
* ``paced bot``: the same bot waiting a human time on every page (a bot built to beat speed checks).
* ``human``: a careful person: lognormal time on the page (median 25 s), now and then a glance at another
  window (10% of pages), the sentence typed key by key with a 1% chance of a typo per character (about the
  uncorrected error rate of Dhakal et al., CHI 2018), the obvious answer of the hidden item, and "I don't
  know" to the shibboleth unless guessing (4% of people guess among its four numbers). Scripted, so the
  human share flagged measures the rules' tolerance to these behaviours, not real people.

Prints the share of each kind flagged (by any rule and by each rule; goals: >= 95% of bots, <= 2% of
humans) and the headline estimate (the disagreement rate of all participants, ``fairness.task_blocks``)
with every participant, without the flagged ones, and of the humans alone.

Run: .venv/bin/python bench/contamination.py [--humans 200] [--bots 100] [--paced 50] [--seed 1]
     [--database-url postgres://USER:PASS@127.0.0.1:5432/DB]
Without --database-url a fresh SQLite file in the temporary folder; with it, the database is emptied first
(use a database of its own).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KINDS = ("human", "bot", "paced bot")


def setup(database_url: str | None) -> None:
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "contamination.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver"
    os.environ["PARTICIPANT_ARRIVALS_PER_ADDRESS"] = "0"
    import django

    django.setup()


def study_spec() -> dict:
    """The bundled disagreement study with a hidden, a shibboleth and a copy item before its last block."""
    spec = json.loads((ROOT / "studies" / "bundled" / "disagreement_synthetic.json").read_text())
    spec["slug"] = "contamination"
    from tasks.detection import CHECKS

    spec["blocks"][-1:-1] = [{"key": f"detect_{c}", "type": "detection", "check": c} for c in CHECKS]
    return spec


class Clock:
    """A virtual ``timezone.now``: the time the clients have spent."""

    def __init__(self, start) -> None:
        self.time = start

    def __call__(self):
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += timedelta(seconds=seconds)


def _typed(sentence: str, rng: np.random.Generator) -> str:
    """The sentence typed with a typo (a neighbouring letter) at 1% of the characters."""
    return "".join(chr(ord(c) + 1) if c.isalpha() and rng.random() < 0.01 else c for c in sentence)


def page_answers(kind: str, page: dict, block: dict | None, data: dict, rng: np.random.Generator) -> tuple[dict, str]:
    """The POST data a client of ``kind`` sends (``data``: the simulated rater's) and its signals field."""
    pastes = pasted = keys = text = 0
    if block is not None and block["type"] == "detection":
        check = block["check"]
        if check == "copy":
            if kind == "human":
                data = {"answer": _typed(block["sentence"], rng)}
                text = len(data["answer"])
                keys = text + int(rng.integers(0, 4))
            else:
                data = {"answer": block["sentence"]}
                pastes, pasted, text = 1, len(block["sentence"]), len(block["sentence"])
        elif kind != "human":
            data = {"answer": block["flag_if"]}
        elif check == "hidden":
            data = {"answer": "7"}
        elif rng.random() < 0.04:
            data = {"answer": str(rng.choice([o for o in block["options"] if o[0].isdigit()]))}
    elif kind != "human" and block is not None and block.get("task") == "agree":
        data = {**data, "answer": "1"}  # "Yes, I agree"
    seconds = float(rng.uniform(0.3, 1.5)) if kind == "bot" else float(rng.lognormal(np.log(25), 0.5))
    blurs = int(kind == "human" and rng.random() < 0.1)
    typing = int(keys * rng.uniform(150, 300))
    return data, f"v1:{int(seconds * 1000)},{blurs},{pastes},{pasted},{keys},{typing},{text}"


def take_study(client, clock: Clock, slug: str, label: str, kind: str, rng: np.random.Generator) -> None:
    from participation.models import Participant
    from participation.pages import condition_index
    from simulation.raters import default_group_effects, draw_rater
    from studies.services import latest_study
    from tasks import task_for

    study = latest_study(slug)
    client.get(f"/s/{slug}/?participant_label={label}")
    client.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    rater = draw_rater(study.spec, default_group_effects(study.spec), rng)
    blocks = {b["key"]: b for b in study.spec["blocks"]}
    while participant.status == Participant.Status.ACTIVE:
        page = participant.plan[participant.position]
        client.get(f"/s/{slug}/page/")
        data = task_for(page).simulate(page, index, rater, rng)
        data, signals = page_answers(kind, page, blocks.get(page.get("block", "")), data, rng)
        clock.advance(float(signals.split(":")[1].split(",")[0]) / 1000)
        client.post(f"/s/{slug}/page/", {**data, "page_key": page["key"], "signals": signals})
        participant.refresh_from_db()


def headline(slug: str, spec: dict, mode: str, seed: int, humans: set[str] | None = None) -> float:
    """The disagreement rate of all participants (``agree`` blocks' ``disagreement_rate``, the "all
    participants" row) under the quality exclusion ``mode``; with ``humans`` the answers of those alone."""
    from fairness.rater_groups import ALL
    from research.export import export_tables
    from runs.design_analysis import analyze_design

    tables = export_tables(slug, quality_exclusion=mode)
    answers = tables.answers[tables.answers["measure"] != "questionnaire"]
    if humans is not None:
        answers = answers[answers["participant_id"].isin(humans)]
    result = analyze_design(
        spec,
        answers.reset_index(drop=True),
        tables.questionnaire,
        by=["role"],
        pool_small=True,
        seed=seed,
        n_resamples=200,
        n_permutations=200,
    )
    frame = next(b for b in result.blocks if b.task == "agree").tables["disagreement_rate"]
    return float(frame.loc[frame["rater_group"] == ALL, "mean"].iloc[0])


@dataclass(frozen=True)
class Contamination:
    """What the benchmark measured: per client kind, its completed participants, the share flagged by any
    rule and by each rule; the headline disagreement rate with everyone, without the flagged and of the
    human-like clients alone."""

    n: dict[str, int]
    flagged: dict[str, float]
    by_rule: dict[str, dict[str, float]]
    everyone: float
    without_flagged: float
    humans_only: float


def contamination(humans: int, bots: int, paced: int, seed: int, owner) -> Contamination:
    """Load the study for ``owner``, run the clients in a shuffled order and measure (a configured
    database: the command's or a test's)."""
    from django.test import Client
    from django.utils import timezone

    from participation.models import Participant
    from research.export import export_tables
    from studies.services import study_load
    from studies.study_file import validate_study

    spec = study_load(spec=validate_study(study_spec()), owner=owner).study.spec
    slug = spec["slug"]
    rng = np.random.default_rng(seed)
    clock = Clock(timezone.now() - timedelta(days=2))
    order = [kind for kind, n in zip(KINDS, (humans, bots, paced), strict=True) for _ in range(n)]
    rng.shuffle(order)
    with mock.patch("django.utils.timezone.now", clock):
        for i, kind in enumerate(order):
            take_study(Client(), clock, slug, f"{kind.replace(' ', '-')}-{i}", kind, rng)

    people = Participant.objects.filter(study__slug=slug)
    kinds = {str(p.pseudonym): p.external_id.rsplit("-", 1)[0].replace("-", " ") for p in people}
    tables = export_tables(slug)
    table = tables.participants[tables.participants["status"] == "completed"]
    table = table.assign(kind=table["participant_id"].map(kinds))
    rules = tables.quality.assign(kind=tables.quality["participant_id"].map(kinds))
    by_rule = {
        kind: rules[rules["kind"] == kind]
        .groupby("rule", sort=False)["flagged"]
        .agg(lambda f: f.fillna(0).mean())
        .to_dict()
        for kind in KINDS
    }
    human_ids = set(table.loc[table["kind"] == "human", "participant_id"])
    return Contamination(
        n={kind: int((table["kind"] == kind).sum()) for kind in KINDS},
        flagged={kind: float((table.loc[table["kind"] == kind, "quality_flags"] != "").mean()) for kind in KINDS},
        by_rule=by_rule,
        everyone=headline(slug, spec, "none", seed),
        without_flagged=headline(slug, spec, "flagged", seed),
        humans_only=headline(slug, spec, "none", seed, human_ids),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--humans", type=int, default=200)
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--paced", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    setup(args.database_url)

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    started = time.perf_counter()
    owner = get_user_model().objects.create(username="bench")
    found = contamination(args.humans, args.bots, args.paced, args.seed, owner)
    seconds = time.perf_counter() - started
    print(f"{sum(found.n.values())} participants took the study and were measured in {seconds:.0f} s")
    print(f"\n{'client':<10} {'n':>4} {'flagged':>8}   by rule (share flagged)")
    for kind in KINDS:
        detail = ", ".join(f"{rule} {value:.0%}" for rule, value in found.by_rule[kind].items())
        print(f"{kind:<10} {found.n[kind]:>4} {found.flagged[kind]:>8.1%}   {detail}")
    print("\nheadline: disagreement rate of all participants (agree block)")
    print(f"  every participant:        {found.everyone:.3f}")
    print(f"  without the flagged:      {found.without_flagged:.3f}")
    print(f"  the human-like ones only: {found.humans_only:.3f}")


if __name__ == "__main__":
    main()
