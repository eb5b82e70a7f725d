"""Every list under /api/ is paged (limit/offset, at most 1000 rows, count/next/previous/results)."""

import io

import pandas as pd
import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from participation.simulate import simulate_participants
from research.api.pagination import MAX_PAGE_SIZE, ApiPagination
from research.export import export_tables, table_records
from runs.models import Job

pytestmark = pytest.mark.django_db

PAGE_KEYS = {"count", "next", "previous", "results"}


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def all_pages(api, url: str) -> tuple[list[dict], int]:
    """Follow ``next`` from ``url``; returns the rows and how many pages it took."""
    rows, pages = [], 0
    while url:
        body = api.get(url).json()
        assert set(body) == PAGE_KEYS and body["count"] >= len(body["results"])
        rows += body["results"]
        url, pages = body["next"], pages + 1
    return rows, pages


def test_export_pages_add_up_to_the_whole_csv_table(api, demo_study):
    simulate_participants("effort-demo", n=5, seed=3)
    whole = pd.read_csv(io.StringIO(api.get("/api/studies/effort-demo/export/pairs/?format=csv").content.decode()))
    assert len(whole) == 5 * 12  # CSV: the whole table in one download
    rows, pages = all_pages(api, "/api/studies/effort-demo/export/pairs/?limit=7")
    assert pages == 9 and len(rows) == 60
    assert rows == table_records(export_tables("effort-demo").pairs)
    assert list(pd.DataFrame(rows).columns) == list(whole.columns)
    assert [r["participant_id"] for r in rows] == whole["participant_id"].tolist()
    second = api.get("/api/studies/effort-demo/export/pairs/?limit=7&offset=7").json()
    assert second["count"] == 60 and second["results"] == rows[7:14]
    assert second["previous"].endswith("/api/studies/effort-demo/export/pairs/?limit=7")
    assert second["next"].endswith("limit=7&offset=14")
    assert api.get("/api/studies/effort-demo/export/pairs/?offset=100").json()["results"] == []


def test_participants_and_studies_are_paged(api, demo_study):
    simulate_participants("effort-demo", n=3, seed=4)
    first = api.get("/api/studies/effort-demo/participants/?limit=2").json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["previous"] is None
    rows, pages = all_pages(api, "/api/studies/effort-demo/participants/?limit=2")
    assert pages == 2 and len({r["participant_id"] for r in rows}) == 3
    studies = api.get("/api/studies/").json()
    assert studies["count"] == 1 and studies["next"] is None


def test_jobs_analyses_and_audits_are_paged_newest_first(api, demo_study, researcher):
    jobs = [Job.objects.create(kind="analysis", study=demo_study, created_by=researcher) for _ in range(3)]
    page = api.get("/api/jobs/?limit=2").json()
    assert page["count"] == 3 and [j["id"] for j in page["results"]] == [str(j.pk) for j in jobs[::-1][:2]]
    for url in ("/api/studies/effort-demo/analyses/", "/api/studies/effort-demo/audits/"):
        assert api.get(url).json() == {"count": 0, "next": None, "previous": None, "results": []}


def test_page_size_is_capped_at_the_maximum():
    frame = pd.DataFrame({"x": range(2500)})
    paginator = ApiPagination()
    request = Request(APIRequestFactory().get("/api/studies/s/export/pairs/", {"limit": 5000, "offset": 10}))
    rows = paginator.paginate_frame(frame, request)
    assert MAX_PAGE_SIZE == 1000 and len(rows) == MAX_PAGE_SIZE and rows[0] == {"x": 10}
    body = paginator.get_paginated_response(rows).data
    assert body["count"] == 2500 and body["next"].endswith("limit=1000&offset=1010")
    default = ApiPagination().paginate_frame(frame, Request(APIRequestFactory().get("/")))
    assert len(default) == 100


def test_every_list_endpoint_in_the_schema_is_paged():
    """A GET whose body is a list must be a paged envelope, with ``limit`` and ``offset``."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    lists = 0
    for path, operations in schema["paths"].items():
        get = operations.get("get")
        if not get:
            continue
        body = get["responses"]["200"]["content"]["application/json"]["schema"]
        resolved = components[body["$ref"].rsplit("/", 1)[1]] if "$ref" in body else body
        assert resolved.get("type") != "array", f"{path} answers a bare list"
        if "results" in resolved.get("properties", {}):
            lists += 1
            assert PAGE_KEYS <= set(resolved["properties"]), path
            assert {"limit", "offset"} <= {p["name"] for p in get.get("parameters", [])}, path
    assert lists == 6  # studies, participants, export tables, analyses, audits, jobs
