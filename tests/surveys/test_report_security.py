"""Reports are escaped and carry no executable inline script; every response sends a CSP that
forbids inline script (red-team finding: stored XSS through a model name in the audit report)."""

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from fairness.model_audit import Subjects, SubjectsFileError, audit, read_subjects
from participation.simulate import simulate_participants
from runs.audit_parameters import AuditParameters
from runs.audit_runs import audit_run_create
from runs.models import AuditRun
from runs.reports.audit import write_audit_report
from runs.reports.base import Case, Section, figure_context, format_value, render_report, table_context
from runs.reports.parity import write_dp_report
from tests.conftest import run_jobs

ROOT = Path(__file__).resolve().parents[2]
XSS = "<script>alert(1)</script>"
ATTR = '"><img src=x onerror=alert(1)>'


class _Scripts(HTMLParser):
    """Collect every <script> tag's attributes and every on* event-handler attribute."""

    def __init__(self):
        super().__init__()
        self.scripts: list[dict] = []
        self.handlers: list[tuple[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attributes = dict(attrs)
        if tag == "script":
            self.scripts.append(attributes)
        self.handlers += [(tag, name) for name in attributes if name.startswith("on")]


def assert_no_inline_script(html: str) -> _Scripts:
    """Only <script src=...> and <script type="application/json"> blocks; no on* handlers."""
    parser = _Scripts()
    parser.feed(html)
    for attributes in parser.scripts:
        assert attributes.get("src") or attributes.get("type") == "application/json", attributes
    assert parser.handlers == []
    assert "javascript:" not in html.lower()
    return parser


def subjects_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"id": [f"s{i}" for i in range(n)]})
    for t in range(4):
        frame[f"x_{2019 + t}"] = rng.poisson(2, n)
    frame["inertia"] = rng.uniform(0.1, 0.9, n).round(3)
    frame["sex"] = rng.choice(["Male", "Female"], n)
    frame["score_a"] = rng.uniform(0, 1, n).round(3)
    return frame


# Column names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("column", [f"score_{XSS}", 'score_x"onmouseover=alert(1)', f"group{ATTR}"])
def test_a_subjects_csv_with_a_hostile_column_is_refused(tmp_path, column):
    path = tmp_path / "subjects.csv"
    subjects_frame().assign(**{column: 0.5}).to_csv(path, index=False)
    with pytest.raises(SubjectsFileError, match="column names must be|model name after 'score_'") as info:
        read_subjects(path)
    assert repr(column) in str(info.value)


@pytest.mark.django_db
@pytest.mark.django_db(transaction=True)
def test_the_audit_api_refuses_a_hostile_model_name(demo_study, researcher, tmp_path):
    path = tmp_path / "subjects.csv"
    subjects_frame().rename(columns={"score_a": f"score_{XSS}"}).to_csv(path, index=False)
    client = APIClient()
    client.force_authenticate(researcher)
    with path.open("rb") as fh:
        response = client.post("/api/studies/effort-demo/audits/", {"subjects": fh}, format="multipart")
    assert response.status_code == 202, response.content
    run_jobs()
    job = client.get(response["Location"]).json()
    assert job["status"] == "failed" and "model name after 'score_'" in job["error"]
    assert job["files"] == [] and not AuditRun.objects.exists()


# Escaping -------------------------------------------------------------------------------------------


def test_hostile_names_and_values_appear_only_escaped_in_the_audit_report(tmp_path):
    """Even past the column-name check (a DataFrame built in a notebook), the template escapes the
    model name, ids and group values, and json_script escapes them inside the figure data."""
    frame = subjects_frame()
    frame["id"] = [f"{XSS}{i}" for i in range(len(frame))]
    frame["sex"] = np.where(np.arange(len(frame)) % 2, ATTR, "Female")
    frame[f"score_{XSS}"] = frame.pop("score_a")
    series = [c for c in frame if c.startswith("x_")]
    subjects = Subjects(frame, series, [XSS], ["sex"])
    result = audit(subjects, desirable=False, scale=1.0, min_size=2)
    html = write_audit_report(result, tmp_path, title=f"Audit {XSS}").path.read_text()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "Worst pairs: &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;title&gt;" not in html and "<title>Audit &lt;script&gt;" in html
    assert_no_inline_script(html)
    # CSV headers and cells neutralised for spreadsheets; figures' data intact in JSON blocks
    assert pd.read_csv(tmp_path / "eaif.csv")["model"].iloc[0] == XSS
    assert (tmp_path / "results.json").exists()


def test_report_csv_headers_are_neutralised(tmp_path):
    frame = pd.DataFrame({'=HYPERLINK("x")': ["-1+1", "ok"], "n": [1, 2]})
    write_dp_report({"t": frame}, [], tmp_path, title="t")
    header, first, _ = (tmp_path / "t.csv").read_text().splitlines()
    assert header.startswith("\"'=HYPERLINK") and first.startswith("'-1+1")
    assert '<th scope="col">=HYPERLINK(&quot;x&quot;)</th>' in (tmp_path / "report.html").read_text()


def test_report_template_renders_every_part_without_inline_script(tmp_path):
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[XSS, "b"], y=[1, 2]))
    fig.update_layout(title=f"Figure {XSS}")
    sections = [
        Section(title=f"Table {XSS}", paragraphs=[ATTR], tables=[table_context(pd.DataFrame({XSS: [ATTR]}))]),
        Section(title="Figure", figure=figure_context(fig)),
        Section(title="Cases", cases=[Case("c1", XSS, [table_context(pd.DataFrame({"a": [1]}), caption=XSS)])]),
        Section(title="Empty", empty=XSS),
    ]
    html = render_report(tmp_path, XSS, sections, intro=[XSS]).read_text()
    parser = assert_no_inline_script(html)
    assert XSS not in html and ATTR not in html
    assert [s.get("type") for s in parser.scripts if not s.get("src")] == ["application/json"]
    assert [s["src"] for s in parser.scripts if s.get("src")] == [
        "report-assets/vendor/plotly.min.js",
        "report-assets/surveys/figures.js",
        "report-assets/surveys/report_nav.js",
    ]
    assert parser.tags.count("section") == 5 and 'href="#figure"' in html  # 4 + the provenance block


def test_every_template_file_has_only_external_scripts():
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        assert_no_inline_script(text.replace("{%", "<!--").replace("%}", "-->"))
        for line in text.splitlines():
            if "<script" in line:
                assert "src=" in line, (path, line)


def test_cells_are_formatted_for_reading():
    assert format_value(0.00001, pvalue=True) == "< .001" and format_value(0.0123, pvalue=True) == "0.012"
    assert format_value(1.23456789) == "1.235" and format_value(3) == "3" and format_value(float("nan")) == ""
    assert format_value(1.5e-5) == "0.000015" and format_value((0.1, 0.2)) == "[0.100, 0.200]"
    table = table_context(pd.DataFrame({"pvalue": [0.0001], "wald_joint_p": [0.5], "p_c": [0.0001]}))
    assert table.rows == [["< .001", "0.500", "0.00010"]]  # p_c is a share, not a p-value


# Content-Security-Policy ----------------------------------------------------------------------------


def assert_csp(response) -> str:
    policy = response.headers.get("Content-Security-Policy", "")
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives.get("script-src") == ["'self'"], policy
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]
    assert directives["default-src"] == ["'self'"] and directives["base-uri"] == ["'self'"]
    return policy


@pytest.mark.slow
@pytest.mark.django_db
def test_csp_on_participant_researcher_report_admin_and_api_responses(
    client, demo_study, researcher, tmp_path, settings
):
    settings.REPORTS_DIR = tmp_path / "reports"
    simulate_participants("effort-demo", n=6, seed=2)
    path = tmp_path / "subjects.csv"
    call_command("generate_demo_audit", condition="arrests", out=str(path))
    audit_run_create(
        slug="effort-demo", subjects_file=path, out_dir=tmp_path / "audit", parameters=AuditParameters(n_resamples=20)
    )

    participant = client.get("/s/effort-demo/?PROLIFIC_PID=csp-person&STUDY_ID=S&SESSION_ID=X", follow=True)
    assert participant.status_code == 200
    assert_csp(participant)
    assert_no_inline_script(participant.content.decode())
    assert_csp(client.get("/accounts/login/"))
    assert_csp(client.get("/healthz"))

    client.force_login(researcher)
    for url in (
        "/researcher/",
        "/researcher/studies/effort-demo/",
        "/researcher/studies/effort-demo/audit/report.html",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_csp(response)
        assert_no_inline_script(
            b"".join(response.streaming_content if response.streaming else [response.content]).decode()
        )
    report = client.get("/researcher/studies/effort-demo/audit/eaif.csv")
    assert report.status_code == 200 and assert_csp(report)

    api = APIClient()
    api.force_authenticate(researcher)
    assert_csp(api.get("/api/studies/"))
    browsable = api.get("/api/studies/", HTTP_ACCEPT="text/html")
    assert browsable.status_code == 200 and assert_csp(browsable)
    assert_no_inline_script(browsable.content.decode())
    assert_csp(api.get("/api/schema/"))

    researcher.is_staff = researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    for url in ("/admin/", "/admin/studies/study/", f"/admin/studies/study/{demo_study.pk}/change/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_csp(response)
        assert_no_inline_script(response.content.decode())


def test_an_empty_section_with_text_still_says_it_is_empty(tmp_path):
    """A section's explanation must not hide that its table is empty."""
    from runs.reports.base import Section, render_report

    html = render_report(
        tmp_path, "t", [Section(title="A", paragraphs=["What A means."], empty="Nothing to test.")]
    ).read_text()
    assert "What A means." in html and "Nothing to test." in html
    assert "Nothing to show." in render_report(tmp_path, "t", [Section(title="B")]).read_text()
