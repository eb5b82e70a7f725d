"""The streamed answers CSV: the same bytes as the in-memory export, a batch of participants at a
time, from the dashboard's download and the API; the other formats from the dashboard."""

import io

import pandas as pd
import pyreadstat
import pytest
from django.http import StreamingHttpResponse
from django.test import Client

from participation.models import Participant
from participation.simulate import simulate_participants
from research.export import export_tables, table_to_csv
from research.export_stream import answers_csv_lines
from research.participant_samples import sample_filter
from tests.research.test_export_answers import SLUG, format2  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _streamed(slug: str, sample: str = "study", batch: int = 250) -> str:
    return "".join(answers_csv_lines(slug, sample_filter(sample), batch=batch))


def test_streamed_answers_equal_the_built_table_format2(format2):  # noqa: F811
    Participant.objects.filter(pk=format2[1].pk).update(status="withdrawn")  # left out as in the export
    expected = table_to_csv(export_tables(SLUG).answers)
    assert "'=cmd" in expected  # the example's formula-like answer, neutralised in both
    assert _streamed(SLUG, batch=1) == expected


def test_streamed_answers_equal_the_built_table_effort_demo(demo_study):
    simulate_participants("effort-demo", n=7, seed=4)  # format 1, one declines, attention failures
    expected = table_to_csv(export_tables("effort-demo").answers)
    assert len(expected.splitlines()) > 100
    for batch in (1, 3, 250):
        assert _streamed("effort-demo", batch=batch) == expected


def test_stream_reads_one_batch_at_a_time(demo_study, django_assert_max_num_queries):
    """Queries grow with the batches, not the rows: the list of ids and the study-wide quality comparisons
    (free texts, arrivals), then per batch the participants, their answers (one server-side cursor) and
    their answer quality: the batch's ids and stored verdicts, and, the first time, the evidence of those
    without one (pages, numeric answers) and their verdicts stored."""
    simulate_participants("effort-demo", n=6, seed=1)
    lines = answers_csv_lines("effort-demo", sample_filter("study"), batch=2)
    with django_assert_max_num_queries(2 + 1 + 2 + 3 * 7):  # studies, header, ids; comparisons; 3 batches x 7
        chunks = list(lines)
    assert len(chunks) == 1 + 3
    lines = answers_csv_lines("effort-demo", sample_filter("study"), batch=2)
    with django_assert_max_num_queries(2 + 1 + 2 + 3 * 4):  # the verdicts stored: 3 batches x 4
        assert list(lines) == chunks


def test_dashboard_and_api_stream_the_answers_csv(demo_study, researcher):
    simulate_participants("effort-demo", n=4, seed=5)
    client = Client()
    client.force_login(researcher)
    expected = table_to_csv(export_tables("effort-demo").answers)
    response = client.get("/researcher/studies/effort-demo/export/answers.csv")
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == 'attachment; filename="effort-demo-answers.csv"'
    assert b"".join(response.streaming_content).decode() == expected
    api = client.get("/api/studies/effort-demo/export/answers/?format=csv")
    assert isinstance(api, StreamingHttpResponse) and api["Content-Type"].startswith("text/csv")
    assert b"".join(api.streaming_content).decode() == expected
    simulated = client.get("/researcher/studies/effort-demo/export/answers.csv?participants=real")
    assert b"".join(simulated.streaming_content).decode().splitlines() == expected.splitlines()[:1]


def test_dashboard_offers_parquet_spss_and_stata(demo_study, researcher, tmp_path):
    simulate_participants("effort-demo", n=3, seed=6)
    client = Client()
    client.force_login(researcher)
    page = client.get("/researcher/studies/effort-demo/").content.decode()
    for fmt in ("parquet", "sav", "dta"):
        assert f"export/participants.{fmt}?participants=study" in page
    participants = export_tables("effort-demo").participants
    response = client.get("/researcher/studies/effort-demo/export/participants.parquet")
    assert response["Content-Type"] == "application/vnd.apache.parquet"
    assert pd.read_parquet(io.BytesIO(response.content))["seed"].tolist() == participants["seed"].tolist()
    response = client.get("/researcher/studies/effort-demo/export/participants.sav")
    assert response["Content-Disposition"] == 'attachment; filename="effort-demo-participants.sav"'
    (tmp_path / "p.sav").write_bytes(response.content)
    frame, meta = pyreadstat.read_sav(str(tmp_path / "p.sav"))
    assert meta.variable_value_labels["simulated"] == {0: "no", 1: "yes"} and frame["simulated"].tolist() == [1] * 3
    assert client.get("/researcher/studies/effort-demo/export/participants.xlsx").status_code == 404
