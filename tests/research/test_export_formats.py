"""Parquet, SPSS and Stata exports: read back with the codebook's types, variable and value labels."""

import io

import pandas as pd
import pyreadstat
import pytest
from django.core.management import call_command

from participation.simulate import simulate_participants
from research.codebook import export_labels
from research.export import export_tables, write_exports
from research.export_formats import _variable_names, typed_frame
from tests.research.test_export_answers import SLUG, format2  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def test_parquet_reads_back_with_the_codebook_types(format2, tmp_path):  # noqa: F811
    call_command("export_responses", SLUG, "--format", "parquet", "--out", str(tmp_path), stdout=io.StringIO())
    tables = export_tables(SLUG)
    participants = pd.read_parquet(tmp_path / "participants.parquet")
    assert str(participants["study_version"].dtype) == "Int64"
    assert str(participants["excluded"].dtype) == "Int64"  # 0/1
    assert str(participants["duration_seconds"].dtype) == "float64"
    assert str(participants["completed_at"].dtype).startswith("datetime64") and "UTC" in str(
        participants["completed_at"].dtype
    )
    assert participants["excluded"].tolist() == tables.participants["excluded"].tolist() == [0, 1]
    questionnaire = pd.read_parquet(tmp_path / "questionnaire.parquet")
    assert str(questionnaire["age"].dtype) == "Int64" and questionnaire["age"].tolist() == [41, 23]
    assert questionnaire["role"].tolist() == ["Works in criminal justice", "Member of the public"]
    assert questionnaire["news"].isna().tolist() == [False, True]  # unanswered stays missing, not "None"
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    assert len(answers) == len(tables.answers) and str(answers["value"].dtype) == "float64"
    pd.testing.assert_series_equal(answers["value"], tables.answers["value"].astype(float))


@pytest.mark.parametrize("fmt, read", [("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)])
def test_spss_and_stata_files_carry_the_codebook_labels(format2, tmp_path, fmt, read):  # noqa: F811
    write_exports(export_tables(SLUG), tmp_path, fmt, export_labels(SLUG))
    frame, meta = read(str(tmp_path / f"questionnaire.{fmt}"))
    labels = meta.column_names_to_labels
    # The example's questions (tests/studies/format2_example.json): role is single choice, trust Likert.
    assert labels["role"].startswith("Which best describes you?")
    assert meta.variable_value_labels["role"] == {
        1: "Member of the public",
        2: "Works in criminal justice",
        3: "Affected person or family",
    }
    assert frame["role"].tolist() == [2, 1]  # stored as the options' codes
    assert meta.variable_value_labels["trust"][1] == "Strongly disagree"
    assert frame["trust"].tolist() == [4, 2]
    participants, meta = read(str(tmp_path / f"participants.{fmt}"))
    assert meta.variable_value_labels["excluded"] == {0: "no", 1: "yes"}
    assert meta.column_names_to_labels["pages_total"] == "Pages in this participant's plan."
    assert participants["excluded"].tolist() == [0, 1]
    _, meta = read(str(tmp_path / f"disagreements.{fmt}"))
    assert meta.variable_value_labels["model_label"] == {0: "low risk", 1: "high risk"}
    if fmt == "dta":
        assert max(len(label) for label in meta.column_names_to_labels.values() if label) <= 80


def test_effort_demo_writes_every_format(demo_study, tmp_path):
    simulate_participants("effort-demo", n=3, seed=2)
    tables = export_tables("effort-demo")
    labels = export_labels("effort-demo")
    for fmt in ("parquet", "sav", "dta"):
        paths = write_exports(tables, tmp_path / fmt, fmt, labels)
        assert [p.name for p in paths] == [f"{name}.{fmt}" for name in tables.present]
    pairs, meta = pyreadstat.read_sav(str(tmp_path / "sav" / "pairs.sav"))
    assert len(pairs) == len(tables.pairs)
    assert pairs["d_overall"].tolist() == tables.pairs["d_overall"].astype(float).tolist()


def test_labelled_formats_need_the_labels(format2, tmp_path):  # noqa: F811
    with pytest.raises(ValueError, match="needs the codebook's labels"):
        write_exports(export_tables(SLUG), tmp_path, "sav")
    with pytest.raises(ValueError, match="format must be one of"):
        write_exports(export_tables(SLUG), tmp_path, "xlsx")


def test_variable_names_are_valid_and_unique():
    names = _variable_names(["about/role", "about_role", "1st", "x" * 40, "x" * 40 + "y"])
    assert names == {
        "about/role": "about_role",
        "about_role": "about_role_1",
        "1st": "v_1st",
        "x" * 40: "x" * 32,
        "x" * 40 + "y": "x" * 30 + "_1",
    }


def test_typed_frame_keeps_missing_values_missing():
    from research.codebook import TableLabels

    frame = pd.DataFrame({"n": [1.0, None], "s": ["a", None], "t": ["2024-01-01T00:00:00+00:00", ""]})
    typed = typed_frame(frame, TableLabels(types={"n": "integer", "s": "string", "t": "datetime"}, meanings={}))
    assert typed["n"].tolist()[0] == 1 and pd.isna(typed["n"].tolist()[1])
    assert typed["s"].tolist()[0] == "a" and pd.isna(typed["s"].tolist()[1])
    assert typed["t"].isna().tolist() == [False, True]


def test_the_api_serves_the_dashboards_file_formats(demo_study, researcher, other_researcher, client, tmp_path):
    """``?format=parquet|sav|dta`` on the API's export table: the dashboard's download (the same table,
    types and labels; SPSS and Stata files carry their creation time), errors stay JSON, another
    researcher gets 404."""
    from rest_framework.test import APIClient

    simulate_participants("effort-demo", n=3, seed=2)
    api = APIClient()
    api.force_authenticate(researcher)
    client.force_login(researcher)
    for fmt, media_type, read in [
        ("parquet", "application/vnd.apache.parquet", None),
        ("sav", "application/x-spss-sav", pyreadstat.read_sav),
        ("dta", "application/x-stata-dta", pyreadstat.read_dta),
    ]:
        response = api.get(f"/api/studies/effort-demo/export/pairs/?format={fmt}")
        assert response.status_code == 200 and response["Content-Type"] == media_type
        assert response["Content-Disposition"] == f'attachment; filename="effort-demo-pairs.{fmt}"'
        download = client.get(f"/researcher/studies/effort-demo/export/pairs.{fmt}")
        assert download.status_code == 200
        if read is None:
            assert response.content == download.content
            continue
        (tmp_path / f"api.{fmt}").write_bytes(response.content)
        (tmp_path / f"page.{fmt}").write_bytes(download.content)
        api_frame, api_meta = read(str(tmp_path / f"api.{fmt}"))
        page_frame, page_meta = read(str(tmp_path / f"page.{fmt}"))
        pd.testing.assert_frame_equal(api_frame, page_frame)
        assert api_meta.column_names_to_labels == page_meta.column_names_to_labels
    pairs = pd.read_parquet(io.BytesIO(api.get("/api/studies/effort-demo/export/pairs/?format=parquet").content))
    likert = export_tables("effort-demo").pairs["d_overall"].astype(int).tolist()
    assert pairs["d_overall"].tolist() == likert  # Int64 in Parquet
    missing = api.get("/api/studies/effort-demo/export/nonsense/?format=sav")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/json"
    assert missing.json()["code"] == "not_found"
    api.force_authenticate(other_researcher)
    assert api.get("/api/studies/effort-demo/export/pairs/?format=dta").status_code == 404
