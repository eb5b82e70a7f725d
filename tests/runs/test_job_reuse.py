"""An analysis and an audit build each study's export once per job and, when no participant has a server-measured
flag (every quality exclusion mode then excludes the same participants), take their main analysis as the one
without the flagged participants instead of repeating it: the same files and results as analysing every mode
again (the old path)."""

import filecmp
from types import SimpleNamespace

import pandas as pd
import pytest

from participation.models import Participant
from research.export import export_tables
from runs import audit_runs, study_exports
from runs.analysis_runs import design_report_write, without_flagged
from runs.audit_parameters import AuditParameters
from runs.audit_runs import audit_run_create
from runs.study_exports import StudyExports

OPTIONS = {"metric_from": "people-alike", "utility_from": "people-choose:choices", "features_from": "people-fair"}


def _every_mode_analysed_again(monkeypatch) -> None:
    monkeypatch.setattr(StudyExports, "same_in_every_mode", lambda self, slug, **sample: False)


def _no_one_flagged(*slugs: str) -> None:
    """The participants a server-measured rule flags deleted (simulated people carry quality signals)."""
    for slug in slugs:
        quality = export_tables(slug, include_pilot=True).quality
        flagged = quality.loc[
            (quality["flagged"].fillna(0).astype(int) == 1) & (quality["source"] == "server"), "participant_id"
        ]
        Participant.objects.filter(study__slug=slug, pseudonym__in=set(flagged)).delete()


def test_one_export_for_every_mode_unless_a_server_rule_flags_someone(monkeypatch):
    built = []
    flags = {"plain": ("server", 0), "flagged": ("server", 1), "client": ("client", 1)}

    def export(slug, **options):
        built.append((slug, options["include_pilot"], options["quality_exclusion"]))
        source, flagged = flags[slug]
        return SimpleNamespace(quality=pd.DataFrame({"flagged": [flagged, pd.NA], "source": [source, "server"]}))

    monkeypatch.setattr(study_exports, "export_tables", export)
    exports = StudyExports()
    for slug in ("plain", "client"):  # a client-reported flag alone excludes no one
        assert exports.same_in_every_mode(slug)
        assert exports.tables(slug, quality_exclusion="flagged") is exports.tables(slug, quality_exclusion="none")
    assert not exports.same_in_every_mode("flagged")
    assert exports.tables("flagged", quality_exclusion="flagged") is not exports.tables("flagged")
    assert exports.same_in_every_mode("plain", include_pilot=True)  # pilots are another sample
    assert built == [
        ("plain", False, "study"),
        ("client", False, "study"),
        ("flagged", False, "study"),
        ("flagged", False, "flagged"),
        ("plain", True, "study"),
    ]


def test_without_flagged_analyses_nothing_again_when_every_mode_is_the_same():
    def analyse(mode: str) -> str:
        raise AssertionError(f"analysed again ({mode})")

    assert without_flagged(analyse, "main", {"quality": {"exclude_if": ["fast"]}}, same=True) == ("main", "main")


@pytest.mark.slow
@pytest.mark.django_db
def test_the_analysis_exports_once_and_writes_the_files_of_analysing_every_mode_again(
    answered_demo, tmp_path, monkeypatch, no_mixed_models
):
    built = []
    export = study_exports.export_tables

    def counted(slug, **options):
        built.append(options["quality_exclusion"])
        return export(slug, **options)

    _no_one_flagged("effort-demo")
    monkeypatch.setattr(study_exports, "export_tables", counted)
    options = {"by": (), "seed": 1, "n_resamples": 30, "include_incomplete": False, "include_pilot": False}
    once = design_report_write(answered_demo, out_dir=tmp_path / "once", groups={}, **options)
    assert built == ["study"]  # the blocks' and the effort analysis's, under every mode (the old path: 4)
    _every_mode_analysed_again(monkeypatch)
    again = design_report_write(answered_demo, out_dir=tmp_path / "again", groups={}, **options)
    assert once and once == again
    files = sorted(p.name for p in (tmp_path / "once").iterdir() if p.is_file() and p.name != "report.html")
    same, different, missing = filecmp.cmpfiles(tmp_path / "once", tmp_path / "again", files, shallow=False)
    assert (different, missing) == ([], []) and {"results.json", "sensitivity.csv", "calibrations.csv"} <= set(same)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_audit_stores_the_results_of_analysing_every_mode_again(sources, tmp_path, monkeypatch):
    human = audit_runs.human_audit_of
    calls = []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("quality_exclusion", "study"))
        return human(*args, **kwargs)

    _no_one_flagged("effort-demo", *(reference.partition(":")[0] for reference in OPTIONS.values()))
    monkeypatch.setattr(audit_runs, "human_audit_of", counted)
    # the fewest resamples that still resample (the bootstrap and the learned metric's refits): the claim is equality
    parameters = AuditParameters(n_resamples=5, seed=4, lipschitz=0.3, **OPTIONS)
    once = audit_run_create(slug="effort-demo", subjects_file=sources, out_dir=tmp_path / "once", parameters=parameters)
    assert once.results["sensitivity"]["n_flagged"] == 0 and calls == ["study"]  # the sources, once
    _every_mode_analysed_again(monkeypatch)
    again = audit_run_create(
        slug="effort-demo", subjects_file=sources, out_dir=tmp_path / "again", parameters=parameters
    )
    assert calls == ["study", "study", "flagged"]
    assert again.results == once.results
