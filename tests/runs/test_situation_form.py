"""The dashboard's situation-testing form: it starts the API's background job with the options typed in (the
data as CSV or Parquet), refuses bad input field by field with nothing queued, and the job, its page and its
report are its starter's alone."""

import io

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from runs.models import Job
from tests.conftest import run_jobs
from tests.fairness.test_situation_scale import synthetic
from tests.runs.test_situation_engine import PARAMS

pytestmark = pytest.mark.django_db
URL = "/researcher/situation-testing/"
FIELDS = {
    "sep": ",",
    "protected": "group",
    "protected_value": "1",
    "target": "Y",
    "negative": "0",
    "features": "score, grade region",
    "k": "15, 40",
    "alpha": "0.1",
    "tau": "0",
    "mode": "paper",
    "engine": "local",
}


@pytest.fixture
def browser(researcher):
    client = Client()
    client.force_login(researcher)
    return client


def upload(frame: pd.DataFrame, name: str, parquet: bool = False) -> SimpleUploadedFile:
    if parquet:
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/octet-stream")
    return SimpleUploadedFile(name, frame.to_csv(index=False).encode(), content_type="text/csv")


def start(browser, data, cf=None, parquet=False, **fields):
    body = {"data": upload(data, "data.parquet" if parquet else "data.csv", parquet), **FIELDS, **fields}
    if cf is not None:
        body["counterfactuals"] = upload(cf, "cf.parquet" if parquet else "cf.csv", parquet)
    return browser.post(URL, body)


def test_the_form_is_on_every_researcher_page(browser):
    page = browser.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="data"' in html and 'name="counterfactuals"' in html and 'value="dask"' in html
    assert f'href="{URL}"' in browser.get("/researcher/").content.decode()  # the researcher's menu


def test_the_form_queues_the_apis_job_with_the_options_typed_in(browser, researcher):
    data, cf = synthetic(300, discrete=True, seed=3)
    response = start(browser, data, cf, engine="dask", positive="true", tau="0.05")
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/researcher/jobs/{job.pk}/"
    assert (job.kind, job.created_by, job.study) == (Job.Kind.SITUATION_TESTING, researcher, None)
    expected = {**PARAMS, "k": [15, 40], "sep": ",", "alpha": 0.1, "tau": 0.05, "mode": "paper", "positive": True}
    assert job.params == {**expected, "engine": "dask"}
    assert sorted(job.inputs) == ["counterfactuals", "data"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"k": "15, many"}, "k", "A valid integer is required."),
        ({"k": "0"}, "k", "greater than or equal to 1"),
        ({"target": "decision"}, "data", "data: no column 'decision'; its columns: group, region, score, grade, Y"),
        ({"features": "score, income"}, "data", "no column 'income'"),
        ({"features": "score, Y"}, "features", "Y cannot be a feature"),
        ({"alpha": "2"}, "alpha", "less than or equal to 0.5"),
        ({"engine": "spark"}, "engine", '"spark" is not a valid choice.'),
        ({"protected": ""}, "protected", "This field may not be blank."),
    ],
)
def test_bad_input_is_refused_field_by_field_and_nothing_is_queued(browser, fields, field, message):
    data, cf = synthetic(200, discrete=True, seed=3)
    response = start(browser, data, cf, **fields)
    assert response.status_code == 400
    assert message in " ".join(response.context["errors"][field])
    assert message.replace("'", "&#x27;").replace('"', "&quot;") in response.content.decode()  # shown, escaped
    assert not Job.objects.exists()


def test_a_file_that_is_no_table_is_refused(browser):
    response = browser.post(URL, {**FIELDS, "data": SimpleUploadedFile("data.csv", b"\x00\x01binary\xff")})
    assert response.status_code == 400 and response.context["errors"]["data"]
    assert not Job.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_job_runs_on_csv_and_parquet_alike_and_only_its_starter_sees_it(browser, other_researcher):
    data, cf = synthetic(400, discrete=True, seed=3)
    results = {}
    for parquet in (False, True):
        job_url = start(browser, data, cf, parquet=parquet)["Location"]
        run_jobs()
        job = Job.objects.get(pk=job_url.rstrip("/").rsplit("/", 1)[1])
        assert job.status == Job.Status.SUCCEEDED, job.error
        results[parquet] = {name: value for name, value in job.result.items() if name != "report_url"}
        page = browser.get(job_url).content.decode()
        assert job.result["report_url"] in page
        report = browser.get(job.result["report_url"])
        assert report.status_code == 200 and b"Situation testing" in b"".join(report.streaming_content)
    assert results[True] == results[False]
    assert [row["k"] for row in results[False]["counts"]] == [15, 40]
    other = Client()
    other.force_login(other_researcher)
    assert other.get(job_url).status_code == 404
    assert other.get(job.result["report_url"]).status_code == 404
