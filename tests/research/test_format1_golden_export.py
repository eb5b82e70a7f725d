"""The bundled effort demo (a format 1 study file) keeps exporting byte for byte what it exported
before format 1 was converted to format 2 at load (issue 20, item 4).

The study is loaded with ``load_study``, deterministic simulated participants (the project's
simulator, seed 1) take it at a fixed clock, and every export a researcher can download is written:
each table as CSV and JSON from the researcher's download page, each table from the API (JSON
records and CSV), ``export_responses`` (CSV and JSON) and the codebook (``export_codebook``). The
only values made deterministic are the ones the code draws at random or from the clock: the
participants' pseudonyms (random UUIDs, replaced by ``UUID(int=i)`` in arrival order) and the current
time (fixed, so the simulator's arrival times and every timestamp derived from them are fixed).
The golden files are PostgreSQL's (CI's database): ``jsonb`` stores object keys in its own order, so
the subjects' ``demo_*`` columns come out in another order on SQLite, where the test is skipped.
The outputs are compared with golden files under ``golden_effort_demo/``; a file larger than
:data:`MAX_INLINE` bytes is kept as its SHA-256 (``<name>.sha256``). The effort calibration alpha of
the demo (``calibrations.csv``) is part of the golden files.

The demo's conversion (``studies.format1.format1_to_format2``), loaded and simulated the same way,
must export the same golden files: the format 2 plan and simulator draw as format 1's for converted
blocks (README, "What a converted demo still exports differently (measured)").

``UPDATE_GOLDEN=1 DATABASE_URL=postgres://... pytest tests/research/test_format1_golden_export.py``
rewrites the golden files (only when an export is meant to change).

The existing study: ``golden_effort_demo_stored/stored.json`` holds the rows the format 1 runtime
stored for that state (study version, conditions, participants with their plans, page visits,
answers; recorded once at commit 0035148, before format 1 was converted at load, and never
regenerated), and ``mid_study.json`` one more participant of that runtime stopped after 10 pages.
Loaded into an empty database (``loaddata``) and converted to format 2 as the data migration converts
them (``participation.format1.convert_stored_study``: the study file and the plans; page visits and
answers unchanged), the stored rows must export the same golden files (the format 1 runtime that exported
them is gone), and the mid-study participant, converted, finishes
the study through the participant views on the format 2 runtime.
"""

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from analysis.pipeline import run_pipeline
from analysis.report import calibrations_table
from participation.format1 import convert_stored_study
from participation.models import Answer, Participant
from participation.pages import condition_index
from participation.services import participant_set_resume_code
from research.export import export_tables
from simulation.raters import default_group_effects, draw_rater
from studies.format1 import format1_to_format2
from studies.models import Study
from studies.services import latest_study
from studies.study_file import validate_study
from tasks import task_for
from tests.conftest import DEMO_FILE, required

GOLDEN = Path(__file__).parent / "golden_effort_demo"
STORED = Path(__file__).parent / "golden_effort_demo_stored"
MAX_INLINE = 200_000
NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)
N_PARTICIPANTS = 8


def _body(response) -> bytes:
    """A response's bytes, whether built or streamed (the answers CSV is streamed)."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def _outputs(client, tmp_path: Path) -> dict[str, bytes]:
    """Every export of the study ``effort-demo``, by file name."""
    out: dict[str, bytes] = {}
    tables = client.get("/api/studies/effort-demo/export/").json()["tables"]
    assert tables == ["pairs", "participants", "disagreements", "pages", "answers", "quality"]
    for table in tables:
        for fmt in ("csv", "json"):
            response = client.get(f"/researcher/studies/effort-demo/export/{table}.{fmt}")
            assert response.status_code == 200, (table, fmt)
            out[f"download-{table}.{fmt}"] = _body(response)
        pages, url = [], f"/api/studies/effort-demo/export/{table}/?limit=1000"
        while url:  # every page of the JSON records, one per line
            response = client.get(url)
            assert response.status_code == 200, table
            pages.append(response.content)
            url = response.json()["next"]
        out[f"api-{table}.json"] = b"\n".join(pages)
        response = client.get(f"/api/studies/effort-demo/export/{table}/?format=csv")
        assert response.status_code == 200, table
        out[f"api-{table}.csv"] = _body(response)
    for fmt in ("csv", "json"):
        call_command(
            "export_responses", "effort-demo", format=fmt, out=str(tmp_path / fmt), stdout=open(os.devnull, "w")
        )
    call_command("export_codebook", "effort-demo", out=str(tmp_path / "codebook"), stdout=open(os.devnull, "w"))
    for path in sorted(tmp_path.rglob("*.*")):
        out[f"command-{path.parent.name}-{path.name}"] = path.read_bytes()
    export = export_tables("effort-demo")
    result = run_pipeline(
        export.pairs.dropna(subset=["d_overall"]), export.participants, seed=1, n_resamples=200, mixed_models=False
    )
    out["calibrations.csv"] = calibrations_table(result).to_csv(index=False).encode()
    return out


def _golden(name: str, content: bytes) -> tuple[str, bytes]:
    """The golden file's name and the bytes it holds for ``content`` (SHA-256 when large)."""
    if len(content) > MAX_INLINE:
        return f"{name}.sha256", (hashlib.sha256(content).hexdigest() + "\n").encode()
    return name, content


def _require_postgres() -> None:
    if connection.vendor != "postgresql":
        if required("REQUIRE_POSTGRES"):
            pytest.fail("CI requires PostgreSQL")
        pytest.skip("golden files recorded on PostgreSQL (jsonb key order): set DATABASE_URL")


def load_stored(researcher, *names: str, study_model=None) -> None:
    """The format 1 runtime's stored rows (``golden_effort_demo_stored/<name>``), owned by ``researcher``.
    ``study_model``: a historical Study model (a database migrated back before the study table's newer
    columns): the study rows are created through it (``loaddata`` writes the current model's columns) and
    the rest loaded from a copy without them."""
    if study_model is None:
        call_command("loaddata", *(str(STORED / name) for name in names), verbosity=0)
        Study.objects.filter(slug="effort-demo").update(owner=researcher, loaded_by=researcher)
        return
    rest = []
    for name in names:
        for row in json.loads((STORED / name).read_text()):
            if row["model"] != "studies.study":
                rest.append(row)
                continue
            fields = dict(row["fields"])
            collaborators = fields.pop("collaborators", [])
            fields |= {"owner_id": researcher.pk, "loaded_by_id": researcher.pk}
            fields.pop("owner", None), fields.pop("loaded_by", None)
            study, _ = study_model.objects.update_or_create(pk=row["pk"], defaults=fields)  # as loaddata does
            study.collaborators.set(collaborators)
    with tempfile.TemporaryDirectory() as folder:
        others = Path(folder) / "stored-without-studies.json"
        others.write_text(json.dumps(rest))
        call_command("loaddata", str(others), verbosity=0)


def _assert_golden(outputs: dict[str, bytes]) -> None:
    assert sorted(outputs) == sorted(p.name for p in GOLDEN.iterdir())
    for name, content in outputs.items():
        assert content == (GOLDEN / name).read_bytes(), f"{name} differs from the golden file"


@pytest.mark.slow  # every export of the study written and compared (3 to 4 CPU s)
@pytest.mark.postgres
@pytest.mark.django_db
def test_stored_effort_demo_exports_are_byte_identical(client, researcher, monkeypatch, tmp_path):
    """The rows a format 1 study stored (exported by the format 1 runtime as the golden files), converted
    to format 2, export the golden files."""
    _require_postgres()
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    load_stored(researcher, "stored.json")
    assert Participant.objects.filter(status="completed").count() == N_PARTICIPANTS
    assert convert_stored_study(Study.objects.get(slug="effort-demo")) == N_PARTICIPANTS
    assert_converted()
    assert_exports_golden(client, researcher, tmp_path)


def assert_converted() -> None:
    """The stored demo is its format 2 conversion, the participants' plans in format 2's page kinds."""
    study = Study.objects.get(slug="effort-demo")
    assert study.spec["format"] == 2 and study.format1_spec["format"] == 1
    kinds = {page["kind"] for p in Participant.objects.all() for page in p.plan}
    assert kinds == {"instructions", "pair_distance", "fair_score", "agree", "attention"}


def assert_exports_golden(client, researcher, tmp_path: Path) -> None:
    """Every export of the demo, downloaded by ``researcher``, equals its golden file."""
    client.force_login(researcher)
    _assert_golden(dict(_golden(name, content) for name, content in _outputs(client, tmp_path).items()))


@pytest.mark.django_db
def test_a_converted_mid_study_participant_finishes_through_the_participant_views(client, researcher, monkeypatch):
    """The format 1 participant stopped after 10 pages resumes (resume code) on the converted study and
    answers the rest through the participant pages; the first 10 pages' answers stay as they were and
    the new ones are stored under format 1's keys."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    load_stored(researcher, "stored.json", "mid_study.json")
    participant = Participant.objects.get(external_id="mid-study")
    before = list(Answer.objects.filter(participant=participant).values_list("page", "question", "number"))
    assert participant.status == "active" and participant.position == 10 and len(before) > 0
    convert_stored_study(participant.study)
    finish_mid_study(client, before)


def finish_mid_study(client, before: list[tuple]) -> None:
    """The converted mid-study participant resumes and answers its remaining pages through the
    participant views; ``before``: its (page, question, number) answers before the conversion."""
    participant = Participant.objects.get(external_id="mid-study")
    assert participant.plan[0]["kind"] == "instructions" and participant.plan[1]["kind"] == "pair_distance"
    code = participant_set_resume_code(participant_id=participant.pk)
    assert client.post("/s/effort-demo/", {"participant_label": "mid-study", "code": code}).status_code == 302
    index = condition_index(participant.study.spec, participant.study.spec_hash, participant.condition.key)
    rater = draw_rater(participant.study.spec, default_group_effects(participant.study.spec), np.random.default_rng(3))
    shown = []
    response = client.get("/s/effort-demo/page/")
    for page in participant.plan[participant.position :]:  # a saved page's answer is the next page
        assert response.status_code == 200  # the page key is filled into the cached render per request
        assert f'name="page_key" value="{page["key"]}"' in response.content.decode()
        data = task_for(page).simulate(page, index, rater, np.random.default_rng(len(shown)))
        response = client.post("/s/effort-demo/page/", {**data, "page_key": page["key"]}, follow=True)
        shown.append(page["key"])
    participant.refresh_from_db()
    assert participant.status == "completed" and participant.position == len(participant.plan)
    assert shown[0] == "attention/ac1" and shown[-1] == "disagreement"
    answers = Answer.objects.filter(participant=participant)
    assert list(answers.values_list("page", "question", "number")[: len(before)]) == before
    assert {page for page, _, _ in answers.values_list("page", "question", "number")} == {
        page["key"] for page in participant.plan if page["kind"] != "instructions"
    }
    assert answers.filter(question="attention/ac1").exists() and answers.filter(question__startswith="output/").exists()
    call_command("check_integrity", "effort-demo", stdout=open(os.devnull, "w"))  # exits 1 on a problem


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("convert", [False, True], ids=["format1", "converted"])
def test_effort_demo_exports_are_byte_identical(client, researcher, monkeypatch, tmp_path, convert):
    """The demo, or its conversion (``format1_to_format2``: the format 2 plan and simulator draw as
    format 1's for converted blocks), taken by the same simulated participants, exports the golden files."""
    _require_postgres()
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    study_file = DEMO_FILE
    if convert:
        study_file = tmp_path / "converted" / "effort_demo.json"
        study_file.parent.mkdir()
        study_file.write_text(json.dumps(format1_to_format2(validate_study(json.loads(DEMO_FILE.read_text())))))
    call_command("load_study", str(study_file), owner=researcher.username, stdout=open(os.devnull, "w"))
    if convert:
        assert latest_study("effort-demo").spec["format"] == 2
        shutil.rmtree(study_file.parent)
    call_command("simulate_participants", "effort-demo", n=N_PARTICIPANTS, seed=1, stdout=open(os.devnull, "w"))
    for i, participant in enumerate(Participant.objects.order_by("arrived_at", "pk")):
        Participant.objects.filter(pk=participant.pk).update(pseudonym=uuid.UUID(int=i + 1))
    assert Participant.objects.filter(status="completed").count() == N_PARTICIPANTS
    client.force_login(researcher)

    outputs = dict(_golden(name, content) for name, content in _outputs(client, tmp_path).items())
    if os.environ.get("UPDATE_GOLDEN") == "1" and not convert:  # the conversion never rewrites them
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.iterdir():
            old.unlink()
        for name, content in outputs.items():
            (GOLDEN / name).write_bytes(content)
    _assert_golden(outputs)
