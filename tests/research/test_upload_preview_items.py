"""The upload preview lists every task block's items as the block's item shape names them ("16 triplets"),
for a triplet study and for every bundled study file (format 1 files as the conversion they are stored
as), so no block previews as 0 items."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.services import stored_file
from studies.study_file import validate_study
from studies.synthetic_defendants import draw_defendants
from tests.studies.test_builder import build

BUNDLED = sorted((Path(__file__).resolve().parents[2] / "studies" / "bundled").glob("*.json"))
NOUNS = {  # what a participant is shown of each shape, named here independently of tasks.item_shapes
    "subjects": ("subject", "subjects"),
    "pairs": ("pair", "pairs"),
    "triplets": ("triplet", "triplets"),
    "sets": ("stimulus set", "stimulus sets"),
    "features": ("feature", "features"),
}


def preview_of(client, spec: dict) -> str:
    raw = json.dumps(spec).encode()
    response = client.post("/researcher/upload/", {"file": SimpleUploadedFile("study.json", raw)})
    assert response.status_code == 302, response.content.decode()[:2000]
    return client.get(response["Location"]).content.decode()


@pytest.mark.django_db
def test_a_triplet_study_previews_its_triplets(client, researcher):
    client.force_login(researcher)
    spec = build(draw_defendants(12, seed=5), "triplet", group_columns=["race", "sex"], slug="triplets")
    block = next(b for b in spec["blocks"] if b["type"] == "task")
    block["triplets"] = block["triplets"][:16]
    assert block["task"] == "triplet"
    html = preview_of(client, spec)
    assert f"<code>{block['key']}</code> (triplet): 16 triplets" in html


@pytest.mark.django_db
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_study_previews_each_task_block(client, researcher, path):
    client.force_login(researcher)
    spec = json.loads(path.read_text())
    html = preview_of(client, spec)
    stored = stored_file(validate_study(spec))[0]
    pools = {p["key"]: p for p in stored["pools"]}
    blocks = [b for b in stored["blocks"] if b["type"] == "task"]
    assert blocks
    for condition in stored["conditions"]:
        row = next(line for line in html.split("<tr>") if f"<code>{condition['key']}</code></th>" in line)
        for block in blocks:
            shape = next((name for name in NOUNS if name != "subjects" and name in block), "subjects")
            listed = pools[block["pool"]]["subjects"] if shape == "subjects" else block[shape]
            n = block["assignment"].get("per_participant", len(listed))
            shown = f"<code>{block['key']}</code> ({block['task']}): {n} {NOUNS[shape][n != 1]}"
            assert (shown in row) == (condition["key"] in block["conditions"]), (condition["key"], shown)
