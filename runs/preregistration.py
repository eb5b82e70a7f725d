"""Preregister a study: freeze its version, its analysis plan (``runs.analysis_plan``), the code version and
the locked requirements into a bundle whose every file is hashed, with a simulated run of the planned
analysis showing the code runs before any real answer exists; record the registration on the study; verify
a bundle later.

The bundle (a folder; stored on the platform as ``bundle.zip``):

- ``manifest.json``: the study (slug, version, file digest), when, the code version, the participants who
  had answered when it was registered, and the sha256 of every other file;
- ``study.json``: the study file as stored (its digest is ``studies.services.spec_digest``);
- ``analysis_plan.json``: the plan, machine-readable (what ``analyze_study`` is asked);
- ``plan.json``: the same plan in preregr's JSON form for the OSF Prereg template (``OSFprereg_v1``: its
  items ``item_1`` title to ``item_25`` other, each ``{"text": ...}``), for R's ``preregr`` and the OSF;
- ``requirements.txt``: the pinned requirements the code ran with;
- ``design-check/<analysis>.json``: the design check of each planned analysis at the planned sample size
  (``runs.design_check``: per block, estimate and rater group, whether it is identified and how wide its
  intervals are expected to be), which the sample-size rationale cites;
- ``simulated-run/``: the planned analysis's report on simulated participants of a throw-away copy of the
  study (rolled back: nothing of it is stored)."""

import hashlib
import json
import shutil
import subprocess
import uuid
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import strict_json
from participation.models import Participant
from participation.simulate import simulate_participants
from runs.analysis_plan import AnalysisPlan, plan_from
from runs.design_check import DesignCheck, check_design
from runs.models import Preregistration
from runs.provenance import software_versions
from runs.storage import delete_prefix, new_prefix, store_directory
from studies.models import Study
from studies.services import latest_study, spec_digest, study_load

ROOT = Path(__file__).resolve().parents[1]
FORM = "OSFprereg_v1"
SIMULATED = 30  # simulated participants of the check run when the plan states no sample size
MANIFEST = "manifest.json"


class RegistrationError(ValueError):
    """A registration that cannot be made (already registered, a bad plan): the message says why."""


def code_version() -> str:
    """The commit the code runs from (``git rev-parse HEAD``), else the platform's version."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"commit {commit}" if commit else f"platform {software_versions()['platform']}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def preregr_plan(study: Study, plan: AnalysisPlan, checks: Mapping[str, DesignCheck]) -> dict[str, Any]:
    """The plan in preregr's JSON form for the OSF Prereg template (module doc): what the platform knows is
    filled from the study file, the plan and the design checks; what only the researcher knows says so."""
    spec = study.spec
    blocks = [b for b in spec["blocks"] if b.get("type") == "task"]
    questions = [q["key"] for b in spec["blocks"] if b.get("type") == "questionnaire" for q in b.get("questions", [])]
    analyses = "; ".join(
        f"{a.name}: split by {' and '.join(a.by) or 'nothing (all participants)'}" for a in plan.analyses
    )
    size = f"{plan.sample_size} participants" if plan.sample_size else "not stated in the plan"
    texts = {
        "item_1": study.title,
        "item_2": "",
        "item_3": spec.get("description", "") or f"A stakeholder study of {len(blocks)} task block(s) ({study.slug}).",
        "item_4": plan.hypotheses or "not stated in the plan",
        "item_5": "Observational study (a survey of stakeholders' judgements of AI decisions)",
        "item_6": "No blinding is involved in this study.",
        "item_7": "",
        "item_8": "; ".join(f"block {b['key']}: {b['task']}" for b in blocks),
        "item_9": "Participants are assigned to conditions and items by the study file's assignment "
        "(balanced or adaptive), "
        "item order randomised per participant.",
        "item_10": "Registration prior to creation of data",
        "item_11": "",
        "item_12": "Online, on this platform; simulated participants are used only for the registered check run.",
        "item_13": size,
        "item_14": " ".join(
            f"Design check of '{name}' ({check.replications} simulated runs of {check.participants} participants): "
            + ("; ".join(check.warnings) if check.warnings else "every estimate is identified at this size.")
            for name, check in checks.items()
        ),
        "item_15": (
            f"Recruitment closes at {plan.sample_size} completed participants (recruitment.target)."
            if plan.sample_size
            else ""
        ),
        "item_16": "; ".join(c.get("key", "") for c in spec.get("conditions", [])),
        "item_17": "; ".join(f"{b['key']} ({b['task']})" for b in blocks)
        + (f"; questionnaire: {', '.join(questions)}" if questions else ""),
        "item_18": "",
        "item_19": f"Each task block's estimator as its task type names it; analyses: {analyses}.",
        "item_20": "",
        "item_21": f"p-values adjusted within each family of tests ({plan.multiple_testing}); 95% intervals from "
        f"{plan.n_resamples} resamples (seed {plan.seed}); rater groups of at least {plan.min_group_size} "
        "participants.",
        "item_22": "The study file's attention checks and answer-quality rules; "
        + (
            "participants who did not complete are analysed"
            if plan.include_incomplete
            else "completed participants only"
        )
        + ("; pilot participants included" if plan.include_pilot else "; pilot participants left out"),
        "item_23": "Participants who did not answer a split question count only in the all-participants rows.",
        "item_24": "Any analysis not listed here is reported as exploratory, with its deviations from this plan.",
        "item_25": "",
    }
    return {
        "form": {"metadata": {"title": {"field": "title", "content": "OSF Prereg"}, "form_id": FORM}},
        "specs": {item: {"text": text or "Unspecified"} for item, text in texts.items()},
        "jstf": {"sources": [], "assertions": [], "justifications": [], "decisions": [], "justifier": []},
    }


def simulated_run(study: Study, plan: AnalysisPlan, out_dir: Path) -> None:
    """The plan's analyses on simulated participants of a throw-away copy of ``study`` (module doc)."""
    from runs.analysis_runs import design_report_write

    class RolledBack(Exception):
        pass

    copy = {**study.spec, "slug": f"prereg-check-{uuid.uuid4().hex[:12]}"}
    copy.pop("recruitment", None)  # the check run's own participants, whatever the target
    try:
        with transaction.atomic():
            sim = study_load(spec=copy, owner=study.owner).study
            simulate_participants(sim.slug, n=min(plan.sample_size or SIMULATED, 200), seed=plan.seed, decline_rate=0)
            sim = Study.objects.get(pk=sim.pk)
            for analysis in plan.analyses:
                sim.title = f"{study.title} (simulated participants: the registered check run)"
                design_report_write(
                    sim,
                    out_dir=out_dir / analysis.name,
                    by=analysis.by,
                    seed=plan.seed,
                    n_resamples=min(plan.n_resamples, 200),
                    include_incomplete=plan.include_incomplete,
                    include_pilot=plan.include_pilot,
                    generalise=plan.generalise,
                    groups={
                        "min_group_size": plan.min_group_size,
                        "min_subject_group": plan.min_subject_group,
                        "pool_small": plan.pool_small,
                        "bins": dict(plan.bins),
                    },
                    multiple_testing=plan.multiple_testing,
                )
            raise RolledBack
    except RolledBack:
        pass


def preregister(
    slug: str, out_dir: Path, *, plan: Mapping[str, Any] | None = None, by=(), user=None
) -> Preregistration:
    """Register the study's latest version with ``plan`` (a plan file's content; None: the command's defaults
    split by ``by``): the bundle written into ``out_dir`` (module doc), stored as ``bundle.zip``, and the
    registration recorded. A study registered already is refused (RegistrationError)."""
    study = latest_study(slug)
    earlier = Preregistration.objects.filter(study__slug=slug).first()
    if earlier is not None:
        raise RegistrationError(
            f"{slug} was registered on {earlier.registered_at:%Y-%m-%d %H:%M} UTC (version {earlier.study.version}, "
            f"manifest {earlier.manifest_sha256[:12]}): a registration is never replaced; report deviations instead"
        )
    try:
        analysis_plan = plan_from(plan, study.spec, by=by)
    except ValueError as exc:
        raise RegistrationError(str(exc)) from exc
    if out_dir.exists() and any(out_dir.iterdir()):
        raise RegistrationError(f"{out_dir} is not empty: the bundle needs a folder of its own")
    out_dir.mkdir(parents=True, exist_ok=True)
    answered = Participant.objects.filter(study__slug=slug, pilot=False, answers__isnull=False).distinct().count()
    registered_at, version = timezone.now(), code_version()
    (out_dir / "study.json").write_text(strict_json.dumps(study.spec, indent=2))
    (out_dir / "analysis_plan.json").write_text(strict_json.dumps(analysis_plan.as_dict(), indent=2))
    checks = {
        analysis.name: check_design(
            study.spec,
            participants=analysis_plan.sample_size or SIMULATED,
            by=analysis.by,
            seed=analysis_plan.seed,
            advise=False,
        )
        for analysis in analysis_plan.analyses
    }
    (out_dir / "design-check").mkdir()
    for name, check in checks.items():
        (out_dir / "design-check" / f"{name}.json").write_text(strict_json.dumps(check.as_dict(), indent=2))
    (out_dir / "plan.json").write_text(strict_json.dumps(preregr_plan(study, analysis_plan, checks), indent=2))
    shutil.copyfile(ROOT / "requirements.txt", out_dir / "requirements.txt")
    simulated_run(study, analysis_plan, out_dir / "simulated-run")
    files = {
        str(path.relative_to(out_dir)): sha256_of(path)
        for path in sorted(out_dir.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }
    manifest = {
        "study": {"slug": slug, "version": study.version, "title": study.title, "spec_digest": spec_digest(study.spec)},
        "registered_at": registered_at.isoformat(),
        "code_version": version,
        "participants_before": answered,
        "files": files,
    }
    (out_dir / MANIFEST).write_text(strict_json.dumps(manifest, indent=2))
    local = Path(settings.REPORTS_DIR) / ".bundles" / uuid.uuid4().hex
    local.mkdir(parents=True)
    try:
        with zipfile.ZipFile(local / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as bundle:
            for path in sorted(out_dir.rglob("*")):
                if path.is_file():
                    bundle.write(path, path.relative_to(out_dir))
        shutil.copyfile(out_dir / MANIFEST, local / MANIFEST)
        prefix = new_prefix("preregistration")
        store_directory(local, prefix)
    finally:
        shutil.rmtree(local, ignore_errors=True)
    try:
        return Preregistration.objects.create(
            study=study,
            registered_at=registered_at,
            registered_by=user,
            plan=analysis_plan.as_dict(),
            code_version=version,
            manifest_sha256=sha256_of(out_dir / MANIFEST),
            files_prefix=prefix,
            participants_before=answered,
        )
    except BaseException:
        delete_prefix(prefix)
        raise


def verify_bundle(folder: Path) -> list[str]:
    """What is wrong with a bundle folder (empty: every file has its manifest hash, none is missing or extra,
    and ``study.json`` has the registered study's digest)."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        return [f"{manifest_path}: no manifest"]
    manifest = json.loads(manifest_path.read_text())
    problems = []
    for name, digest in manifest["files"].items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_of(path) != digest:
            problems.append(f"{name}: changed (sha256 {sha256_of(path)[:12]}, registered {digest[:12]})")
    extra = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    problems += [f"{name}: not in the manifest" for name in extra if name not in manifest["files"]]
    study = folder / "study.json"
    if study.is_file() and spec_digest(json.loads(study.read_text())) != manifest["study"]["spec_digest"]:
        problems.append("study.json: its digest is not the registered study version's")
    return problems
