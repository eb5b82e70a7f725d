"""Build a study file from a CSV and stash it for its preview (:mod:`research.study_upload`): the same
steps in a web request (small tables, ``studies.builder.builds_inline``) and in a background job."""

import hashlib
from dataclasses import asdict

import pandas as pd
from django.conf import settings

from core.uploads import read_csv_upload
from research.study_upload import stash_preview, stash_upload
from studies.builder import BuildOptions, build_study_from_frame, study_file_bytes, summarise_study
from studies.study_file import validate_study


def read_subjects(source, params: dict) -> pd.DataFrame:
    """The subjects CSV under the upload limits (``core.uploads.read_csv_upload``), ids read as text."""
    return read_csv_upload(source, name=params["name"], text_columns=(params["id_column"],))


def build_and_stash(*, user, frame: pd.DataFrame, params: dict) -> str:
    """Build, validate and stash the study file for ``user`` with its summary for the preview
    (``summarise_study``, stored by ``stash_preview``); returns the file's SHA-256.
    Raises StudyBuildError, InvalidStudyFile or StashNotStored (nothing stashed)."""
    fields = {key: value for key, value in params.items() if key != "name"}
    features = fields.get("feature_columns")
    options = BuildOptions(
        **{
            **fields,
            "group_columns": tuple(fields["group_columns"]),
            "model_label_columns": tuple(fields.get("model_label_columns", ())),
            "feature_columns": None if features is None else tuple(features),
            "mix": tuple(fields.get("mix", ())),
        }
    )
    spec = build_study_from_frame(frame, options, name=params["name"])
    validated = validate_study(spec)
    raw = study_file_bytes(spec, max_bytes=settings.STUDY_FILE_MAX_BYTES)
    digest = hashlib.sha256(raw).hexdigest()
    stash_upload(user=user, digest=digest, raw=raw)
    stash_preview(user=user, digest=digest, kind="build", preview=asdict(summarise_study(validated)))
    return digest
