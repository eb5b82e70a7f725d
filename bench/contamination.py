"""Contamination benchmark: a zoo of scripted bot styles against simulated careful people on the bundled
disagreement study with a free-text question and a detection item of each check (``tasks.detection``),
through the participant pages (Django's test client, the views a browser uses) on a virtual clock
(``django.utils.timezone.now`` set to each client's own time, so hours of reading take seconds). It prints
each answer-quality rule's hit rate per bot style and its false-flag rate among the people, and names the
styles no rule catches.

People (``human``): page times and the script's counts from ``simulation.interaction`` (reading speed,
answering, key intervals, glances away) over the page's load as served; answers from the rater model
(``simulation.raters``); the obvious answer of the hidden item, "I don't know" to the shibboleth unless
guessing (4%), the sentence typed with 1% typos; a free text of 12-30 words drawn from a 150-word
vocabulary (people's texts are not near-duplicates of each other); each from an address range of their own,
arriving at random over six hours. Scripted: their share flagged measures the rules' tolerance to this
model, not real people.

Bot styles (language-model answers unless stated: they agree with every AI prediction with confidence 4 and
predict 70%, a homogeneous answer pattern; they read the page's text, so they follow the hidden instruction
and answer the shibboleth; their free text is one of three stock answers with a word changed):

* ``fast``: machine speed (0.3-1.5 s a page), pastes its texts (the browser's script reports the pastes).
* ``paced``: the same waiting a human time on every page (lognormal, median 25 s).
* ``filler``: a browser bot using Playwright's ``fill()``: 0.5-2 s a page, text put in without keys.
* ``careful typer``: a browser bot that waits 2.5-6 s a page and types its texts with key events
  (0.1-0.3 s a key), never pastes, never leaves the page.
* ``forger``: an HTTP client that waits 2.5-6 s a page and writes its own ``signals`` field, drawn from the
  people's model for that page (plausible counts, a human time on the page).
* ``farm``: ``careful typer`` bots run from one address range, arriving within ten minutes.
* ``mimic``: a bot built to pass: it spends the people's modelled time on each page and reports it honestly,
  answers from the rater model, writes a text of its own, answers the detection items as a careful person
  does and comes from its own address range (a human-in-the-loop or a careful agent told to ignore hidden
  text).

Run: .venv/bin/python bench/contamination.py [--humans 100] [--per-style 12] [--seed 1]
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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the repository first, and not bench/ itself: bench/coverage.py would shadow the coverage package
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]
BOTS = ("fast", "paced", "filler", "careful typer", "forger", "farm", "mimic")
KINDS = ("human", *BOTS)
TEXT_KEY = "fairness_view"
VOCABULARY = (
    "fair unfair prediction person people judge decide decision record past history future chance risk score "
    "computer model data court crime sentence prison family job income neighbourhood school age race gender "
    "background context reason explain explanation evidence bias biased equal equally treat treatment same "
    "different group individual mistake error wrong right should would could must never always sometimes often "
    "depends matter matters important human humans someone everyone nobody trust doubt believe think feel worry "
    "hope change changed second chances growth effort behaviour recent old years months numbers statistics "
    "honest transparent open closed secret review appeal check checked rules law laws judge's officer police "
    "arrest arrests poor rich support help harm punish punishment safety public society community care careful "
    "simple complex whole story only just more less than because when if but and or not"
).split()
STOCK = (
    "A fair prediction treats every person equally and considers the context of their situation carefully.",
    "Fairness means the prediction should not depend on race or gender but on relevant and recent behaviour.",
    "A prediction is fair when it is transparent, explainable and applied consistently to every individual.",
)


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
    """The bundled disagreement study with a free-text question and a hidden, a shibboleth and a copy item
    before its last block."""
    spec = json.loads((ROOT / "studies" / "bundled" / "disagreement_synthetic.json").read_text())
    spec["slug"] = "contamination"
    from tasks.detection import CHECKS

    about = next(b for b in spec["blocks"] if b["type"] == "questionnaire")
    about["questions"].append(
        {"key": TEXT_KEY, "type": "text", "text": "In a sentence or two: what makes a prediction about a person fair?"}
    )
    spec["blocks"][-1:-1] = [{"key": f"detect_{c}", "type": "detection", "check": c} for c in CHECKS]
    return spec


class Clock:
    """A virtual ``timezone.now``: the time of the client now taking the study."""

    def __init__(self, start) -> None:
        self.time = start

    def __call__(self):
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += timedelta(seconds=seconds)


@dataclass
class Client:
    """One participant's client: its style, address, person model (people and mimics) and stock text."""

    kind: str
    address: str
    reader: object
    text: str
    previous_block: str | None = None


def _typed(sentence: str, rng: np.random.Generator) -> str:
    """The sentence typed with a typo (a neighbouring letter) at 1% of the characters."""
    return "".join(chr(ord(c) + 1) if c.isalpha() and rng.random() < 0.01 else c for c in sentence)


def _own_text(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(VOCABULARY, size=int(rng.integers(12, 31)))).capitalize() + "."


def _stock_text(rng: np.random.Generator) -> str:
    words = str(rng.choice(STOCK)).split()
    words[int(rng.integers(len(words)))] = str(rng.choice(["clearly", "truly", "always", "really"]))
    return " ".join(words)


def _answers(client: Client, block: dict | None, data: dict, rng: np.random.Generator) -> tuple[dict, int]:
    """The POST data of ``client``'s style (``data``: the rater model's) and the characters in its text fields."""
    llm = client.kind not in ("human", "mimic")
    if block is not None and block["type"] == "detection":
        check = block["check"]
        if check == "copy":
            answer = block["sentence"] if llm else _typed(block["sentence"], rng)
            return {"answer": answer}, len(answer)
        if llm:
            return {"answer": block["flag_if"]}, 0
        if check == "hidden":
            return {"answer": "7"}, 0
        guess = rng.random() < 0.04
        return ({"answer": str(rng.choice([o for o in block["options"] if o[0].isdigit()]))} if guess else data), 0
    if TEXT_KEY in data or (block is not None and block["type"] == "questionnaire"):
        return {**data, TEXT_KEY: client.text}, len(client.text)
    if llm and block is not None and block.get("task") == "agree":
        return {**data, "answer": "1", "sure": "4", "prediction": "70"}, 0
    return data, 0


def _page_time(client: Client, load, typed: int, familiar: bool, rng: np.random.Generator) -> tuple[float, str]:
    """Seconds the server sees on the page and the ``signals`` field the client sends."""
    from simulation.interaction import page_interaction

    kind = client.kind
    modelled = page_interaction(
        client.reader, words=load.words, inputs=load.inputs, typed_chars=typed, familiar=familiar, rng=rng
    )
    signals: tuple[int, ...] = modelled.signals
    if kind in ("human", "mimic"):
        seconds = modelled.seconds
    elif kind == "forger":  # waits a bot's time, claims a person's
        seconds = float(rng.uniform(2.5, 6))
    else:
        keys = typed if kind in ("careful typer", "farm") else 0
        typing = keys * float(rng.uniform(0.1, 0.3))
        seconds = {
            "fast": float(rng.uniform(0.3, 1.5)),
            "paced": float(rng.lognormal(np.log(25), 0.5)),
            "filler": float(rng.uniform(0.5, 2)),
        }.get(kind, float(rng.uniform(2.5, 6))) + typing
        pasted = typed if kind in ("fast", "paced") else 0
        signals = (int((seconds - 0.1) * 1000), 0, int(bool(pasted)), pasted, keys, int(typing * 1000), typed)
    return seconds, "v1:" + ",".join(str(max(0, n)) for n in signals)


def take_study(web, clock: Clock, slug: str, label: str, client: Client, rng: np.random.Generator) -> None:
    from participation.models import Participant
    from participation.page_load import measure_page_load
    from participation.pages import condition_index
    from simulation.raters import default_group_effects, draw_rater
    from studies.services import latest_study
    from tasks import task_for

    study = latest_study(slug)
    web.get(f"/s/{slug}/?participant_label={label}")
    web.post(f"/s/{slug}/consent/", {"decision": "accept"})
    participant = Participant.objects.get(external_id=label)
    index = condition_index(study.spec, study.spec_hash, participant.condition.key)
    rater = draw_rater(study.spec, default_group_effects(study.spec), rng)
    blocks = {b["key"]: b for b in study.spec["blocks"]}
    while participant.status == Participant.Status.ACTIVE:
        page = participant.plan[participant.position]
        load = measure_page_load(web.get(f"/s/{slug}/page/").content.decode())
        block = blocks.get(page.get("block", page["key"]))
        data, typed = _answers(client, block, task_for(page).simulate(page, index, rater, rng), rng)
        familiar = page.get("block") is not None and page.get("block") == client.previous_block
        client.previous_block = page.get("block")
        seconds, signals = _page_time(client, load, typed, familiar, rng)
        clock.advance(seconds)
        web.post(f"/s/{slug}/page/", {**data, "page_key": page["key"], "signals": signals})
        participant.refresh_from_db()


def headline(slug: str, spec: dict, mode: str, seed: int, humans: set[str] | None = None) -> float:
    """The disagreement rate of all participants (``agree`` blocks' ``disagreement_rate``, the "all
    participants" row) under the quality exclusion ``mode``; with ``humans`` the answers of those alone (NaN when
    too few participants remain for the table)."""
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
    frame = next(b for b in result.blocks if b.task == "agree").tables.get("disagreement_rate")
    if frame is None:  # too few participants for the table
        return float("nan")
    return float(frame.loc[frame["rater_group"] == ALL, "mean"].iloc[0])


@dataclass(frozen=True)
class Contamination:
    """What the benchmark measured: per client kind, its completed participants, the share flagged by any
    rule, by any server-measured rule and by each rule (for ``human``: the false-flag rates); the headline
    disagreement rate with everyone, without the flagged and of the people alone."""

    n: dict[str, int]
    flagged: dict[str, float]
    server_flagged: dict[str, float]
    by_rule: dict[str, dict[str, float]]
    everyone: float
    without_flagged: float
    humans_only: float

    def uncaught(self) -> list[str]:
        """The bot styles no rule flags in any run."""
        return [kind for kind in BOTS if self.n[kind] and self.flagged[kind] == 0]


def _clients(
    humans: int, per_style: int | Mapping[str, int], rng: np.random.Generator, start
) -> list[tuple[Client, object]]:
    """Every client with its arrival time, in arrival order (the farm within ten minutes from one range);
    ``per_style``: the clients of each bot style, or a count per style."""
    from simulation.interaction import draw_reader

    def address() -> str:
        return f"10.{rng.integers(256)}.{rng.integers(256)}.{rng.integers(1, 255)}"

    farm_start = start + timedelta(hours=float(rng.uniform(0, 5.5)))
    out = []
    for kind in KINDS:
        count = humans if kind == "human" else per_style if isinstance(per_style, int) else per_style[kind]
        for _ in range(count):
            own = kind in ("human", "mimic")
            text = _own_text(rng) if own else _stock_text(rng)
            if kind == "farm":
                at, where = farm_start + timedelta(minutes=float(rng.uniform(0, 10))), f"10.99.7.{rng.integers(1, 255)}"
            else:
                at, where = start + timedelta(hours=float(rng.uniform(0, 6))), address()
            out.append((Client(kind, where, draw_reader(rng), text), at))
    out.sort(key=lambda pair: pair[1])
    return out


def contamination(humans: int, per_style: int | Mapping[str, int], seed: int, owner) -> Contamination:
    """Load the study for ``owner``, run the clients in arrival order and measure (a configured database:
    the command's or a test's)."""
    from django.test import Client as WebClient
    from django.utils import timezone

    from participation.models import Participant
    from research.export import export_tables
    from studies.services import study_load
    from studies.study_file import validate_study

    spec = study_load(spec=validate_study(study_spec()), owner=owner).study.spec
    slug = spec["slug"]
    rng = np.random.default_rng(seed)
    clock = Clock(timezone.now() - timedelta(days=2))
    with mock.patch("django.utils.timezone.now", clock):
        for i, (client, at) in enumerate(_clients(humans, per_style, rng, clock.time)):
            clock.time = at
            label = f"{client.kind.replace(' ', '_')}-{i}"
            take_study(WebClient(REMOTE_ADDR=client.address), clock, slug, label, client, rng)

    people = Participant.objects.filter(study__slug=slug)
    kinds = {str(p.pseudonym): p.external_id.rsplit("-", 1)[0].replace("_", " ") for p in people}
    tables = export_tables(slug)
    table = tables.participants[tables.participants["status"] == "completed"]
    table = table.assign(kind=table["participant_id"].map(kinds))
    rules = tables.quality.assign(kind=tables.quality["participant_id"].map(kinds))
    rules = rules.assign(hit=rules["flagged"].fillna(0).astype(int))
    by_rule = {kind: rules[rules["kind"] == kind].groupby("rule", sort=False)["hit"].mean().to_dict() for kind in KINDS}
    server = rules[rules["source"] == "server"].groupby(["kind", "participant_id"])["hit"].max()
    human_ids = set(table.loc[table["kind"] == "human", "participant_id"])
    return Contamination(
        n={kind: int((table["kind"] == kind).sum()) for kind in KINDS},
        flagged={kind: float((table.loc[table["kind"] == kind, "quality_flags"] != "").mean()) for kind in KINDS},
        server_flagged={kind: float(server.get(kind, server.iloc[:0]).mean()) for kind in KINDS},
        by_rule=by_rule,
        everyone=headline(slug, spec, "none", seed),
        without_flagged=headline(slug, spec, "flagged", seed),
        humans_only=headline(slug, spec, "none", seed, human_ids),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--humans", type=int, default=100)
    parser.add_argument("--per-style", type=int, default=12)
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
    found = contamination(args.humans, args.per_style, args.seed, owner)
    seconds = time.perf_counter() - started
    print(f"{sum(found.n.values())} participants took the study and were measured in {seconds:.0f} s")
    rules = list(found.by_rule["human"])
    print("\nshare flagged per rule (human: the false-flag rate; bot styles: the hit rate)")
    header = f"{'client':<14}{'n':>4}{'any':>6}{'server':>7} " + "".join(f"{r[:8]:>9}" for r in rules)
    print(header)
    for kind in KINDS:
        cells = "".join(f"{found.by_rule[kind].get(r, 0):>9.0%}" for r in rules)
        print(f"{kind:<14}{found.n[kind]:>4}{found.flagged[kind]:>6.0%}{found.server_flagged[kind]:>7.0%} {cells}")
    print(f"\ncaught by no rule: {', '.join(found.uncaught()) or 'none'}")
    print("\nheadline: disagreement rate of all participants (agree block)")
    print(f"  every participant:        {found.everyone:.3f}")
    print(f"  without the flagged:      {found.without_flagged:.3f}")
    print(f"  the human-like ones only: {found.humans_only:.3f}")


if __name__ == "__main__":
    main()
