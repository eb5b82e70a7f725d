"""The API's serializers of background jobs and their runs: what starting each kind of job takes
(checked when the request is made, 400 with field errors) and what a job or run looks like."""

import argparse
import math

from django.urls import reverse
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.utils import html

from core.cli_args import bins_text
from core.uploads import UploadError, check_separator, csv_upload_header, is_parquet
from fairness.group_options import MIN_GROUP_SIZE, MIN_SUBJECT_GROUP
from fairness.sampling_options import BOUNDS, MAX_PAIRS
from runs.analysis_defaults import ANALYSIS_DEFAULTS
from runs.analysis_plan import DeviationNeedsReason, check_reason
from runs.audit_condition import AuditError, audited_condition
from runs.audit_parameters import DEFAULTS, AuditParameters, sampling_problems
from runs.human_source_options import LIPSCHITZ, OPTIONS, SURROGATE, parameter_problems
from runs.models import Job
from runs.plan_parameters import PLAN_PARAMETERS, check_weights
from runs.situation_runs import ENGINES
from simulation.effort_design import effort_conditions
from studies.format2 import check_by
from tasks import BLOCK_TASKS, parity_tables


class BinsField(serializers.DictField):
    """{column: cut points}, or the text of ``analyze_study --bins`` for several columns (``core.cli_args.bins_text``),
    which the dashboard's form posts in one text box."""

    def get_value(self, dictionary):
        if html.is_html_input(dictionary):  # a form: one text field, not DRF's "bins.<key>" fields
            text = dictionary.get(self.field_name, "")
            return text if text.strip() else empty
        return super().get_value(dictionary)

    def to_internal_value(self, data):
        if isinstance(data, str):
            try:
                data = bins_text(data)
            except argparse.ArgumentTypeError as exc:
                raise serializers.ValidationError(str(exc)) from exc
        return super().to_internal_value(data)


def checked_by(serializer: serializers.Serializer, by: list[str]) -> list[str]:
    """``by`` checked against the serializer's study (``context["study"]``): questionnaire questions to split by."""
    study = serializer.context.get("study")
    if not by or study is None:
        return by
    try:
        return list(check_by(study.spec, by))
    except ValueError as exc:
        raise serializers.ValidationError(str(exc)) from exc


class AnalysisRequestSerializer(serializers.Serializer):
    seed = serializers.IntegerField(default=ANALYSIS_DEFAULTS["seed"], min_value=0, max_value=2**62)
    n_resamples = serializers.IntegerField(default=ANALYSIS_DEFAULTS["n_resamples"], min_value=100, max_value=20000)
    include_pilot = serializers.BooleanField(default=False, help_text="Also analyse pilot participants.")
    include_incomplete = serializers.BooleanField(
        default=False, help_text="Also analyse participants who have not completed (default: completed only)."
    )
    generalise = serializers.ChoiceField(
        choices=["stimuli", "none"],
        required=False,
        help_text="'stimuli': alpha's CI resamples stimulus pairs too (generalises to other pairs); 'none': "
        "participants only (for the study's own pairs). Default: the study file's analysis.generalise.",
    )
    multiple_testing = serializers.ChoiceField(
        choices=["holm", "bh", "none"],  # analysis.families.METHODS (not imported: the web workers load no science)
        default="holm",
        help_text="The adjustment of the p-values within each family of tests (the tests that answer one question): "
        "'holm' (family-wise error rate), 'bh' (Benjamini-Hochberg, false discovery rate) or 'none'.",
    )
    by = serializers.ListField(
        child=serializers.CharField(max_length=60),
        default=list,
        max_length=4,
        help_text="Format 2 studies: questionnaire question keys that define the rater (stakeholder) groups, or "
        "'language' (the participant's); several are combined (e.g. ['role', 'age_band']).",
    )

    min_group_size = serializers.IntegerField(
        default=MIN_GROUP_SIZE,
        min_value=1,
        max_value=100000,
        help_text="Format 2 studies: rater groups with fewer participants are 'too few to compare' (left out of "
        "the group rows and tests).",
    )
    pool_small = serializers.BooleanField(
        default=False, help_text="Pool the rater and subject groups below the minimum into 'other' instead."
    )
    min_subject_group = serializers.IntegerField(
        default=MIN_SUBJECT_GROUP,
        min_value=1,
        max_value=100000,
        help_text="Subject groups of the pool with fewer subjects are 'too few to compare'.",
    )
    bins = BinsField(
        child=serializers.ListField(child=serializers.FloatField(), min_length=1, max_length=50),
        default=dict,
        help_text='Cut points of numeric subject-group columns, e.g. {"age": [25, 45]} gives < 25, 25 to < 45 '
        "and >= 45 (default: the pool's quartiles for a numeric column with more than 5 values); also as the "
        "command's text, \"age=25,45; priors=1,3\" (the dashboard's form).",
    )

    deviation_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="A preregistered study: why this analysis deviates from the registered plan (needed when it does; "
        "the report lists every deviation with it).",
    )

    def validate(self, attrs: dict) -> dict:
        """A preregistered study's analysis that deviates from its plan needs its reason (``check_reason``), asked
        when the request is made."""
        study = self.context.get("study")
        if study is not None:
            generalise = attrs.get("generalise") or study.spec.get("analysis", {}).get("generalise")
            options = {name: attrs.get(name) for name in ("by", "include_incomplete", "include_pilot", "seed")}
            options |= {name: attrs.get(name) for name in ("multiple_testing", "n_resamples", "pool_small", "bins")}
            options |= {"generalise": None if generalise == "none" else generalise}
            options |= {name: attrs.get(name) for name in ("min_group_size", "min_subject_group")}
            try:
                check_reason(study, options, attrs.get("deviation_reason", ""))
            except DeviationNeedsReason as exc:
                raise serializers.ValidationError({"deviation_reason": [str(exc)]}) from exc
        return attrs

    def validate_by(self, by: list[str]) -> list[str]:
        """Checked against the study (``context["study"]``) when the request is made, not in the job."""
        return checked_by(self, by)


class PreregistrationRequestSerializer(serializers.Serializer):
    """A study's analysis plan to register (``runs.analysis_plan``): one planned analysis split by ``by``, with
    the analysis's options; the defaults are ``analyze_study``'s."""

    by = serializers.ListField(
        child=serializers.CharField(max_length=60),
        default=list,
        max_length=4,
        help_text="The planned analysis's rater groups: questionnaire question keys (none: all participants).",
    )
    hypotheses = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=5000, help_text="The hypotheses, in your words."
    )
    sample_size = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=1_000_000,
        help_text="Participants to be analysed (default: the study file's recruitment.target).",
    )
    seed = serializers.IntegerField(default=ANALYSIS_DEFAULTS["seed"], min_value=0, max_value=2**62)
    n_resamples = serializers.IntegerField(default=ANALYSIS_DEFAULTS["n_resamples"], min_value=100, max_value=20000)
    multiple_testing = serializers.ChoiceField(choices=["holm", "bh", "none"], default="holm")
    include_pilot = serializers.BooleanField(default=False)
    include_incomplete = serializers.BooleanField(default=False)
    min_group_size = serializers.IntegerField(default=ANALYSIS_DEFAULTS["min_group_size"], min_value=1)

    def validate_by(self, by: list[str]) -> list[str]:
        return checked_by(self, by)

    def plan(self) -> dict:
        """The plan file's content (``runs.analysis_plan.plan_from``)."""
        data = dict(self.validated_data)
        plan = {"analyses": [{"name": "primary", "by": data.pop("by")}], **data}
        return {key: value for key, value in plan.items() if value is not None}


class PreregistrationSerializer(serializers.Serializer):
    registered_at = serializers.DateTimeField()
    study_version = serializers.IntegerField(source="study.version")
    registered_by = serializers.CharField(source="registered_by.username", default=None)
    plan = serializers.JSONField()
    code_version = serializers.CharField()
    manifest_sha256 = serializers.CharField()
    participants_before = serializers.IntegerField()
    bundle_url = serializers.SerializerMethodField()

    def get_bundle_url(self, registration) -> str:
        return reverse("researcher:preregistration-bundle", args=[registration.study.slug])


class AnalysisRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study_version = serializers.IntegerField(source="study.version")
    seed = serializers.IntegerField()
    n_resamples = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    report_url = serializers.SerializerMethodField()
    results = serializers.JSONField()

    def get_report_url(self, run) -> str:
        return reverse("researcher:analysis-file", args=[run.pk, "report.html"])


class AuditRequestSerializer(serializers.Serializer):
    subjects = serializers.FileField(
        help_text="Subjects CSV or Parquet file: id, score_<model> and/or label_<model> per model, the sensitive and "
        "truth columns, optionally x_<time> effort series and feature columns (a Parquet file's columns are checked "
        "by the job)"
    )
    engine = serializers.ChoiceField(
        choices=["pandas", "dask"],
        default=DEFAULTS.engine,
        help_text="pandas: the job reads the subjects file itself; dask: the job reads a Parquet subjects file as a "
        "Dask DataFrame on the cluster at the server's DASK_SCHEDULER_ADDRESS, else on a local cluster",
    )
    groups = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        help_text="the sensitive columns of the subjects file the group metrics compare (the form lists its header)",
    )
    outcome_column = serializers.CharField(
        required=False, allow_blank=True, max_length=64, help_text="the truth (0/1) column of the subjects file"
    )
    condition = serializers.CharField(required=False, allow_blank=True)
    calibration = serializers.IntegerField(required=False)
    shown_model = serializers.CharField(allow_blank=True, default=DEFAULTS.shown_model)
    by = serializers.ListField(
        child=serializers.CharField(max_length=100, allow_blank=True),
        required=False,
        help_text="rater groups of those studies: questionnaire question keys (the form's text box: separated by "
        "spaces or commas)",
    )
    lipschitz = serializers.FloatField(
        default=DEFAULTS.lipschitz,
        help_text="L of the human metric's Lipschitz condition |s_i - s_j| <= L d(i, j): the scores' units per unit "
        "of human-metric distance (> 0)",
    )
    multiple_testing = serializers.ChoiceField(
        choices=["holm", "bh", "none"],
        default=DEFAULTS.multiple_testing,
        help_text="The adjustment of the disagreement notions' 'no gap' tests within each model's family.",
    )
    surrogate = serializers.CharField(
        default=DEFAULTS.surrogate,
        max_length=20,
        help_text="with features_from: the model fitted to each audited model's scores for its permutation "
        "importances, 'linear' (least squares) or 'forest' (random forest, out-of-bag R^2)",
    )
    exact_eaif = serializers.BooleanField(
        default=False,
        help_text="every EaIF exact at any number of subjects, on Dask: the cluster at the server's "
        "DASK_SCHEDULER_ADDRESS, else a local cluster of the job's machine (default: exact up to 50,000 subjects, "
        "sampled with a distribution-free bound above)",
    )
    bound = serializers.CharField(
        default=DEFAULTS.bound,
        max_length=20,
        help_text=f"the interval of a sampled EaIF and violation share, at 95%: {', '.join(BOUNDS)} (empirical "
        "Bernstein and Hoeffding hold for every number of pairs with no assumption but terms in [0, 1]; normal is "
        "the central limit theorem's approximation)",
    )
    n_pairs = serializers.IntegerField(
        default=DEFAULTS.n_pairs,
        help_text=f"uniform pairs drawn when EaIF is sampled (at least 1,000, at most {MAX_PAIRS:,}); with half_width, "
        "the first check",
    )
    half_width = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="when EaIF is sampled: draw until the interval's half-width is at most this (from 5e-05 to below "
        "0.5; it wins over n_pairs, which is then the first check)",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        """The declared fields and one ``SLUG[:BLOCK]`` field per source option
        (``runs.human_source_options.OPTIONS``, which say what each reads from the task registry)."""
        sources = {
            name: serializers.CharField(required=False, allow_blank=True, max_length=200, help_text=option.help)
            for name, option in OPTIONS.items()
        }
        return {**super().get_fields(), **sources}

    def validate_by(self, by: list[str]) -> list[str]:
        """Question keys, the form's one text box split at spaces and commas."""
        return [key for text in by for key in text.replace(",", " ").split()]

    def validate(self, data: dict) -> dict:
        """The audited condition and calibration (``runs.audit_condition.audited_condition``), the sensitive and truth
        columns checked against the subjects file's header, and the source options against the researcher's studies
        and the subjects' columns (``runs.human_sources.check_sources``), when the request is made, not in the job
        (which checks them again)."""
        try:
            parquet = is_parquet(data["subjects"], name="subjects")
            header = [] if parquet else csv_upload_header(data["subjects"], name="subjects")
        except UploadError as exc:
            raise serializers.ValidationError({"subjects": [str(exc)]}) from exc
        data["subjects"].seek(0)
        if data["engine"] == "dask" and not parquet:
            raise serializers.ValidationError(
                {"engine": ["engine 'dask' reads a Parquet subjects file; this upload is a CSV: use engine 'pandas'"]}
            )
        try:
            audited_condition(
                self.context["study"],
                condition=data.get("condition") or None,
                calibration_id=data.get("calibration"),
                effort_series=any(column.startswith("x_") for column in header),  # Parquet: checked by the job
            )
        except AuditError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        problems = sampling_problems(bound=data["bound"], n_pairs=data["n_pairs"], half_width=data.get("half_width"))
        if problems:
            raise serializers.ValidationError(problems)
        named = [*data.get("groups", []), *([data["outcome_column"]] if data.get("outcome_column") else [])]
        if named and not parquet:
            where = f"not a column of the subjects file ({', '.join(header)})"
            errors = {
                field: [f"{column!r} is {where}" for column in columns if column not in header]
                for field, columns in (
                    ("groups", data.get("groups", [])),
                    ("outcome_column", named[len(data.get("groups", [])) :]),
                )
            }
            if any(errors.values()):
                raise serializers.ValidationError({field: found for field, found in errors.items() if found})
        if parquet or not data.get("by") and not any(data.get(option) for option in OPTIONS):
            problems = parameter_problems(lipschitz=data[LIPSCHITZ], surrogate=data[SURROGATE])
            if problems:  # no source: nothing to read, and no scientific import in the web worker
                raise serializers.ValidationError(problems)
            return data
        from runs.human_sources import SourceErrors, check_sources  # reads the sources' answers (pandas)

        try:
            columns = csv_upload_header(data["subjects"], name="subjects")
        except UploadError as exc:
            raise serializers.ValidationError({"subjects": [str(exc)]}) from exc
        try:
            check_sources(
                audited_slug=self.context["study"].slug,
                researcher=self.context["researcher"],
                columns=columns,
                parameters=AuditParameters.from_request(data),
            )
        except SourceErrors as exc:
            raise serializers.ValidationError(exc.errors) from exc
        return data


class AuditRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    condition = serializers.CharField(source="condition.key", help_text="Condition key.")
    created_at = serializers.DateTimeField()
    report_url = serializers.SerializerMethodField()
    results = serializers.JSONField()

    def get_report_url(self, run) -> str:
        return reverse("researcher:audit-file", args=[run.pk, "report.html"])


class SituationTestingRequestSerializer(serializers.Serializer):
    # DRF's metaclass moves declared fields off the class: ``.data`` stays the serializer's property
    data = serializers.FileField()  # type: ignore[assignment]
    counterfactuals = serializers.FileField(required=False)
    sep = serializers.CharField(default=",", max_length=2, trim_whitespace=False)
    protected = serializers.CharField()
    protected_value = serializers.CharField(help_text="JSON or text, e.g. 1 or Female")
    target = serializers.CharField()
    negative = serializers.CharField(help_text="the negative decision value, JSON or text")
    features = serializers.ListField(child=serializers.CharField(), required=False)
    k = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=1000), default=[15])
    alpha = serializers.FloatField(default=0.05, min_value=1e-6, max_value=0.5)
    tau = serializers.FloatField(default=0.0, min_value=-1, max_value=1)
    mode = serializers.ChoiceField(choices=["paper", "reference"], default="paper")
    positive = serializers.BooleanField(default=False)
    engine = serializers.ChoiceField(
        choices=ENGINES,
        default="local",
        help_text='where the neighbour searches run: "local" (the job\'s machine, the default) or "dask": the '
        "complainants partitioned into tasks on the Dask cluster at the server's DASK_SCHEDULER_ADDRESS, else on "
        "a local cluster of the job's machine (the same results; a request never names a cluster)",
    )

    def validate_sep(self, value: str) -> str:
        """Refused at once (a regular expression such as ``(x`` is no separator), not in the job."""
        try:
            check_separator(value, "data")
        except UploadError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return value

    def validate(self, data: dict) -> dict:
        """The named columns against a CSV upload's header (a Parquet file's are checked by the job), and the
        protected attribute and the decision kept out of the features, when the request is made."""
        features = data.get("features") or []
        among = [c for c in (data["protected"], data["target"]) if c in features]
        if among:
            raise serializers.ValidationError(
                {
                    "features": [
                        f"{', '.join(among)} cannot be a feature: the distance leaves out the protected "
                        "attribute and the decision"
                    ]
                }  # fmt: skip
            )
        for name in ("data", "counterfactuals"):
            upload = data.get(name)
            if upload is None:
                continue
            try:
                columns = [] if is_parquet(upload, name=name) else csv_upload_header(upload, name=name, sep=data["sep"])
            except UploadError as exc:
                raise serializers.ValidationError({name: [str(exc)]}) from exc
            upload.seek(0)
            wanted = [data["protected"], data["target"], *features] if name == "data" else features
            missing = [c for c in dict.fromkeys(wanted) if columns and c not in columns]
            if missing:
                raise serializers.ValidationError(
                    {name: [f"{name}: no column {', '.join(map(repr, missing))}; its columns: {', '.join(columns)}"]}
                )
        return data


class DifferentialParityRequestSerializer(serializers.Serializer):
    alpha = serializers.FloatField(default=0.05, min_value=1e-6, max_value=0.5)
    favourable = serializers.ChoiceField(
        choices=["lower", "higher"],
        default="lower",
        help_text='which risk scores and labels are good for the subject: "lower" (default; a low risk is '
        'favourable) or "higher"; it decides which group the verdicts call favoured',
        error_messages={
            "invalid_choice": 'must be "higher" or "lower" (which risk scores and labels are good for the subject), '
            "not {input!r}"
        },
    )

    def validate(self, data: dict) -> dict:
        """Refused when the study's task blocks give no table of differential parity (``tasks.parity_tables``:
        nothing the AI's outputs can be compared with), not in the job."""
        spec = self.context["study"].spec
        if not parity_tables(spec):
            givers = " or ".join(f"{t.name} blocks ({t.parity_table})" for t in BLOCK_TASKS.values() if t.parity_table)
            blocks = ", ".join(f"{b['key']} ({b['task']})" for b in spec["blocks"] if b["type"] == "task") or "none"
            raise serializers.ValidationError(
                f"differential parity compares participants' answers with the AI's outputs, which {givers} give; "
                f"this study has no such block (its task blocks: {blocks})"
            )
        return data


class PlanRequestSerializer(serializers.Serializer):
    """plan_study's parameters, with the command's ranges and defaults (``PLAN_PARAMETERS``)."""

    def get_fields(self):
        return {
            name: (serializers.IntegerField if p.integer else serializers.FloatField)(
                min_value=p.low, max_value=p.high, default=p.default, help_text=p.help
            )
            for name, p in PLAN_PARAMETERS.items()
        }

    def validate(self, data: dict) -> dict:
        errors = {name: ["A finite number is required."] for name, v in data.items() if not math.isfinite(v)}
        if errors:
            raise serializers.ValidationError(errors)
        try:
            check_weights(data["a1"], data["a2"])
        except ValueError as exc:
            raise serializers.ValidationError({"a2": [str(exc)]}) from exc
        try:
            effort_conditions(self.context["study"].spec)  # what the plan simulates: refused here, not in the job
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return data


class JobSerializer(serializers.Serializer):
    """A background job: poll ``url`` until ``status`` is ``succeeded`` (see ``result``), ``failed``
    (see ``error``) or ``cancelled``."""

    id = serializers.UUIDField()
    url = serializers.SerializerMethodField()
    kind = serializers.CharField()
    status = serializers.ChoiceField(choices=Job.Status.values, source="reported_status")
    study = serializers.CharField(source="study.slug", default=None)
    progress = serializers.FloatField(help_text="0 to 1")
    progress_message = serializers.CharField()
    params = serializers.JSONField()
    result = serializers.JSONField(allow_null=True)
    error = serializers.CharField()
    attempts = serializers.IntegerField(help_text="How many times a worker started the job (2: its first worker died)")
    retry_safe = serializers.BooleanField(help_text="Whether the job runs once more if its worker dies")
    log = serializers.CharField()
    files = serializers.SerializerMethodField(help_text="URLs of the job's output files")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, job) -> str:
        return reverse("api-job", args=[job.pk])

    def get_files(self, job) -> list[str]:
        return [reverse("researcher:job-file", args=[job.pk, name]) for name in job.files]
