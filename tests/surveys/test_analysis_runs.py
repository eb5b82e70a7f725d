import pytest

from surveys.analysis_runs import analysis_run_create
from surveys.models import Calibration
from surveys.simulate import simulate_participants

pytestmark = pytest.mark.django_db


def test_analysis_run_writes_report_and_versions_calibrations(demo_study, tmp_path):
    simulate_participants("effort-demo", n=20, seed=3)
    run = analysis_run_create(slug="effort-demo", out_dir=tmp_path / "a", seed=2, n_resamples=200)
    assert {p.name for p in (tmp_path / "a").iterdir()} >= {
        "report.html",
        "results.json",
        "table2.csv",
        "table5.csv",
    }
    html = (tmp_path / "a" / "report.html").read_text()
    assert "cdn" not in html.lower() and "/static/vendor/plotly.min.js" in html
    assert not (tmp_path / "a" / "plotly.min.js").exists()
    assert sorted(run.calibrations.values_list("condition", flat=True)) == ["arrests", "income"]
    analysis_run_create(slug="effort-demo", out_dir=tmp_path / "b", seed=3, n_resamples=200)
    assert sorted(Calibration.objects.filter(condition="arrests").values_list("version", flat=True)) == [1, 2]
    assert run.results["calibrations"][0]["alpha"] == pytest.approx(
        run.calibrations.get(condition=run.results["calibrations"][0]["condition"]).alpha
    )


def test_too_few_participants_is_a_clear_error(demo_study, tmp_path):
    with pytest.raises(ValueError, match="too few participants"):
        analysis_run_create(slug="effort-demo", out_dir=tmp_path, seed=1, n_resamples=10)


def test_dashboard_links_the_latest_report(client, demo_study, researcher, other_researcher, tmp_path):
    simulate_participants("effort-demo", n=12, seed=4)
    analysis_run_create(slug="effort-demo", out_dir=tmp_path, seed=1, n_resamples=50)
    client.force_login(researcher)
    body = client.get("/researcher/studies/effort-demo/").content.decode()
    assert "/researcher/studies/effort-demo/report/report.html" in body and "alpha" in body
    assert client.get("/researcher/studies/effort-demo/report/report.html").status_code == 200
    assert client.get("/researcher/studies/effort-demo/report/table2.csv").status_code == 200
    assert client.get("/researcher/studies/effort-demo/report/plotly.min.js").status_code == 404
    assert client.get("/researcher/studies/effort-demo/report/..%2Fsecret").status_code == 404
    client.force_login(other_researcher)
    assert client.get("/researcher/studies/effort-demo/report/report.html").status_code == 404
