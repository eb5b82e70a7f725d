"""Run the study pipeline on a study's export and store the run and its Calibrations."""

import json
from collections.abc import Callable
from pathlib import Path

from django.db import transaction

from analysis.bts import participant_bts
from analysis.pipeline import run_pipeline
from research.export import export_tables
from runs.calibrations import calibration_create
from runs.provenance import study_provenance
from runs.reports import write_report
from runs.storage import delete_prefix, new_prefix, store_directory
from studies.services import latest_study
from surveys.models import AnalysisRun


def analysis_run_create(
    *,
    slug: str,
    out_dir: Path,
    seed: int = 1,
    n_resamples: int = 2000,
    include_incomplete: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    include_pilot: bool = False,
) -> AnalysisRun:
    """Export, analyse (completed, non-excluded participants only unless ``include_incomplete``;
    pilot participants only with ``include_pilot``; the report counts the dropped by reason), write
    the report into ``out_dir``, store its files (storage folder ``analysis/<uuid>``) and the run with
    one new Calibration version per condition in one transaction; if storing fails, nothing of the
    run remains."""
    study = latest_study(slug)
    tables = export_tables(slug, include_pilot=include_pilot)
    try:
        result = run_pipeline(
            tables.pairs.dropna(subset=["d_overall"]),
            tables.participants,
            seed=seed,
            n_resamples=n_resamples,
            include_incomplete=include_incomplete,
            progress=progress,
        )
    except ValueError as exc:
        raise ValueError(f"study {slug!r}: {exc}") from exc
    sample = result.sample
    bts = participant_bts(sample.pairs, similar_max=study.spec["likert"]["similar_max"])
    provenance = study_provenance(
        study,
        participants={"in the export": len(tables.participants), "analysed": sample.included},
        dropped=sample.dropped,
        seeds={"analysis": seed},
        settings={
            "Bootstrap resamples": str(n_resamples),
            "Participants": "all with answers" if include_incomplete else "completed only",
            "Pilot participants": "included" if include_pilot else "left out",
        },
    )
    write_report(
        result, sample.pairs, bts, out_dir, title=f"{study.title}: analysis (seed {seed})", provenance=provenance
    )
    prefix = new_prefix("analysis")
    store_directory(out_dir, prefix)
    try:
        with transaction.atomic():
            run = AnalysisRun.objects.create(
                study=study,
                seed=seed,
                n_resamples=n_resamples,
                files_prefix=prefix,
                results=json.loads((out_dir / "results.json").read_text()),
            )
            for cal in result.calibrations:
                calibration_create(
                    study=study,
                    analysis_run=run,
                    kind="likert",
                    condition=cal.condition,
                    alpha=cal.alpha,
                    ci_low=cal.ci[0],
                    ci_high=cal.ci[1],
                    a1=cal.a1,
                    a2=cal.a2,
                    n_participants=cal.n_participants,
                    seed=seed,
                )
    except BaseException:
        delete_prefix(prefix)
        raise
    return run
