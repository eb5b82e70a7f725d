import dataclasses
import io

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from fairness import law_school
from tests.conftest import REFERENCE_DATA

CST = REFERENCE_DATA / "counterfactual_situation_testing"
K = [15, 30, 50, 100, 250]

# Alvarez & Ruggieri, "Counterfactual Situation Testing", Section 5.3, read off the paper's tables
# (alpha = 0.05, tau = 0; Table 12 tests each attribute at alpha / 2). Per method: the counts at
# k = 15, 30, 50, 100, 250, then the starred (statistically significant) counts below them.
TABLE_10_RACE = {
    "CSTwo": ([256, 309, 337, 400, 503], [244, 301, 323, 391, 494]),
    "ST": ([33, 51, 61, 64, 78], [28, 28, 45, 47, 61]),
    "CSTwi": ([286, 309, 337, 400, 503], [244, 301, 323, 391, 494]),
    "CF": ([231, 231, 231, 231, 231], [190, 231, 231, 231, 231]),
}
TABLE_11_GENDER = {
    "CSTwo": ([78, 120, 253, 296, 493], [43, 88, 160, 221, 341]),
    "ST": ([77, 101, 229, 258, 484], [57, 69, 111, 124, 366]),
    "CSTwi": ([99, 129, 267, 296, 493], [54, 92, 160, 221, 341]),
    "CF": ([56, 56, 56, 56, 56], [20, 15, 30, 21, 32]),
}
TABLE_12_MULTIPLE = {
    "CSTwo": ([8, 10, 20, 20, 40], [4, 6, 11, 17, 24]),
    "ST": ([5, 5, 12, 19, 24], [0, 0, 5, 5, 15]),
    "CSTwi": ([9, 10, 21, 20, 40], [4, 9, 11, 17, 24]),
    "CF": ([5, 5, 5, 5, 5], [0, 3, 1, 1, 2]),
}
TABLE_13_INTERSECTIONAL = {
    "CSTwo": ([130, 138, 148, 160, 199], [130, 138, 148, 160, 199]),
    "ST": ([14, 14, 17, 24, 29], [14, 14, 13, 23, 26]),
    "CSTwi": ([130, 138, 148, 160, 199], [130, 138, 148, 160, 199]),
    "CF": ([113, 113, 113, 113, 113], [113, 113, 113, 113, 113]),
}
TABLES = {
    "race": TABLE_10_RACE,
    "gender": TABLE_11_GENDER,
    "multiple": TABLE_12_MULTIPLE,
    "intersectional": TABLE_13_INTERSECTIONAL,
}


@pytest.fixture(scope="module")
def reference_run():
    if not CST.exists():
        pytest.skip("reference data not present")
    return law_school.run(CST / "clean_LawSchool.csv", k=K, mode="reference")


def _counts(results, name):
    return results.multiple if name == "multiple" else getattr(results, name).counts


@pytest.mark.slow  # the full-data reference run (18 CPU-s) shared by the module
@pytest.mark.parametrize("name", list(TABLES))
def test_reference_mode_reproduces_the_published_tables(reference_run, name):
    """Every cell of Tables 10-13: four methods, all and significant, five k values."""
    counts = _counts(reference_run, name).set_index("k")
    assert counts.index.tolist() == K
    for method, (cases, significant) in TABLES[name].items():
        assert counts[method].tolist() == cases, (name, method)
        assert counts[f"{method}_sig"].tolist() == significant, (name, f"{method}_sig")


@pytest.mark.slow  # the full-data reference run (18 CPU-s) shared by the module
def test_the_reports_published_tables_are_the_papers(reference_run):
    """The constants the report compares against (law_school.PUBLISHED_TABLES) are the test's
    transcription of the paper, so a reference run differs from them nowhere."""
    for name in TABLES:
        diff = law_school.differences(_counts(reference_run, name), name)
        assert diff["k"].tolist() == K
        assert (diff.drop(columns="k") == 0).all().all(), name
    assert reference_run.n_protected == {"gender": 9537, "race": 3506, "both": 1833}


def _reference_sample(folder, n=2500):
    """A random sample of the LSAC rows with the same rows of the authors' counterfactual files."""
    folder.mkdir(exist_ok=True)
    data = pd.read_csv(CST / "clean_LawSchool.csv", sep="|")
    rows = data.sample(n=n, random_state=3).index
    data.loc[rows].to_csv(folder / "clean_LawSchool.csv", sep="|", index=False)
    for file, _ in law_school.REFERENCE_FILES.values():
        cf = pd.read_csv(CST / file, sep="|").reset_index(drop=True)
        cf.loc[rows].to_csv(folder / file, sep="|")
    return folder / "clean_LawSchool.csv"


def test_reference_run_does_not_repeat_the_searches_of_the_bonferroni_runs(monkeypatch, tmp_path):
    import fairness.situation_testing as st

    if not CST.exists():
        pytest.skip("reference data not present")
    calls = []
    search = st._knn
    monkeypatch.setattr(st, "_knn", lambda *args: calls.append(args[-1]) or search(*args))
    results = law_school.run(_reference_sample(tmp_path), k=[15, 30], mode="reference")
    assert len(calls) == 9  # 3 searches x (gender, race, intersectional); the alpha / 2 runs reuse them
    assert results.mode == "reference" and list(results.multiple["k"]) == [15, 30]


def test_command_reference_mode_writes_the_four_count_files(tmp_path):
    if not CST.exists():
        pytest.skip("reference data not present")
    data = _reference_sample(tmp_path / "in")
    out = io.StringIO()
    call_command(
        "law_school_experiment", data=str(data), k=[15, 30], mode="reference", out=str(tmp_path / "law"), stdout=out
    )
    columns = ["k", "ST", "CSTwo", "CSTwi", "CF", "ST_sig", "CSTwo_sig", "CSTwi_sig", "CF_sig"]
    for name in ("gender", "race", "multiple", "intersectional"):
        counts = pd.read_csv(tmp_path / "law" / f"counts_{name}.csv")
        adjusted = (
            []
            if name == "multiple"
            else [f"{m}{s}" for s in ("_sig_exact", "_sig_adjusted") for m in ("ST", "CSTwo", "CSTwi", "CF")]
        )
        assert counts.columns.tolist() == columns + adjusted and counts["k"].tolist() == [15, 30], name
    html = (tmp_path / "law" / "report.html").read_text()
    assert "reference mode" in html and "Table 13" in html


def test_reference_mode_refuses_files_that_do_not_line_up(tmp_path):
    """A sample of the data beside the full counterfactual files, and a file whose rows are shuffled."""
    if not CST.exists():
        pytest.skip("reference data not present")
    data = _reference_sample(tmp_path)
    gender_file = law_school.REFERENCE_FILES["gender"][0]
    pd.read_csv(CST / gender_file, sep="|").to_csv(tmp_path / gender_file, sep="|")
    with pytest.raises(CommandError, match=r"cf_LawSchool_lev3_doMale.csv has 21790 rows, the data 2500"):
        call_command("law_school_experiment", data=str(data), k=[15], mode="reference", out=str(tmp_path / "o"))
    shuffled = pd.read_csv(CST / gender_file, sep="|").sample(n=2500, random_state=4)
    shuffled.to_csv(tmp_path / gender_file, sep="|")
    with pytest.raises(ValueError, match=r"doMale.csv: row \d+ has (Sex|Race) = .* the files do not line up"):
        law_school.run(data, k=[15], mode="reference")
    with pytest.raises(ValueError, match="mode must be one of"):
        law_school.run(data, mode="authors")


@pytest.mark.slow  # the full-data reference run (18 CPU-s) shared by the module
def test_report_compares_with_the_published_tables(reference_run, tmp_path):
    from runs.reports.situation_testing import write_law_school_report

    html = write_law_school_report(reference_run, reference_run.data, tmp_path / "ref", k=K).read_text()
    assert "Every count of this run (k = 15, 30, 50, 100, 250) equals the published one." in html
    assert "this run minus" not in html and "reference mode" in html
    gender = reference_run.gender
    shifted = dataclasses.replace(gender, counts=gender.counts.assign(ST=gender.counts["ST"] + 1))
    diff = law_school.differences(shifted.counts, "gender")
    assert diff["ST"].tolist() == [1] * 5 and (diff.drop(columns=["k", "ST"]) == 0).all().all()
    paper_like = dataclasses.replace(reference_run, gender=shifted, mode="paper")
    html = write_law_school_report(paper_like, reference_run.data, tmp_path / "paper", k=K).read_text()
    assert "Gender: this run minus Table 11 (0 = the published count)" in html
    assert "Why the paper mode differs from the published tables" in html and "Every count" not in html
