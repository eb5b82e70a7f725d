"""Run the study pipeline on a study's export and store the run and its Calibrations."""

from collections.abc import Callable
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from analysis.bts import participant_bts
from analysis.pipeline import run_pipeline
from analysis.report import results_dict
from surveys.export import export_tables
from surveys.models import AnalysisRun, Calibration
from surveys.reports import write_report
from surveys.services import latest_study


def analysis_run_create(
    *,
    slug: str,
    out_dir: Path,
    seed: int = 1,
    n_resamples: int = 2000,
    progress: Callable[[str, int, int], None] | None = None,
) -> AnalysisRun:
    """Export, analyse (excluded participants dropped), write the report, and store the run with
    one new Calibration version per condition, all in one transaction."""
    study = latest_study(slug)
    tables = export_tables(slug)
    completed = tables.pairs.dropna(subset=["d_overall"])
    if completed["participant_id"].nunique() < 3:
        raise ValueError(f"study {slug!r} has too few participants with answers to analyse")
    result = run_pipeline(completed, tables.participants, seed=seed, n_resamples=n_resamples, progress=progress)
    bts = participant_bts(completed[completed["excluded"] != 1], similar_max=study.spec["likert"]["similar_max"])
    write_report(result, completed, bts, out_dir, title=f"{study.title}: analysis (seed {seed})")
    with transaction.atomic():
        run = AnalysisRun.objects.create(
            study=study,
            seed=seed,
            n_resamples=n_resamples,
            out_dir=str(out_dir.resolve()),
            results=results_dict(result),
        )
        for cal in result.calibrations:
            previous = Calibration.objects.filter(study=study, kind="likert", condition=cal.condition).aggregate(
                v=Max("version")
            )["v"]
            Calibration.objects.create(
                study=study,
                analysis_run=run,
                kind="likert",
                condition=cal.condition,
                version=(previous or 0) + 1,
                alpha=cal.alpha,
                ci_low=cal.ci[0],
                ci_high=cal.ci[1],
                a1=cal.a1,
                a2=cal.a2,
                n_participants=cal.n_participants,
                seed=seed,
            )
    return run
