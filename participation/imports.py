"""Existing crowd datasets brought into the platform as completed format 2 studies.

A source (``SOURCES``) turns a public release into a :class:`CrowdDataset`: the study file (item pools,
questionnaire, task blocks) and the completed participants (plan and answers in the format 2 contract's
shape). :func:`crowd_study_import` stores it: the study version through ``study_load``, then participants
and answers with ``bulk_create`` in one transaction. Importing a slug that already has participants
changes nothing (``already_imported``); another researcher's slug is refused, with or without an owner.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from fairness.datasets import (
    BISWAS_EDUCATION,
    WORKER_AGE,
    WORKER_EDUCATION,
    WORKER_GENDER,
    WORKER_RACE,
    load_biswas,
    load_dressel_farid,
    load_dressel_farid_defendants,
    load_dressel_farid_workers,
)
from participation.models import Answer, Participant
from studies.models import Study
from studies.services import StudyOwnedByOther, may_load_version, slug_taken, study_load
from tasks.questions import questionnaire_question, task_question

REFERENCE_DATA = Path(settings.BASE_DIR).parent / "shared" / "reference-data"


@dataclass(frozen=True)
class ImportedAnswer:
    """One answer row: ``question`` / ``page`` keys as the participant runtime writes them."""

    page: str
    question: str
    measure: str
    set_key: str
    subject_key: str
    number: float | None
    text: str = ""


@dataclass(frozen=True)
class ImportedParticipant:
    external_id: str
    condition: str
    plan: list[dict]
    answers: list[ImportedAnswer]


@dataclass(frozen=True)
class CrowdDataset:
    spec: dict
    participants: list[ImportedParticipant]


@dataclass(frozen=True)
class CrowdImportResult:
    study: Study
    action: str  # "imported" or "already_imported"
    participants: int
    answers: int

    @property
    def message(self) -> str:
        """What an import command prints (the same for every source and a generic CSV)."""
        head = f"{self.study.slug} v{self.study.version}"
        if self.action == "already_imported":
            return (
                f"{head}: already imported ({self.participants} participants, {self.answers} answers); nothing changed"
            )
        return f"{head}: imported {self.participants} completed participants and {self.answers} answers"


# --- Dressel & Farid (2018), "The accuracy, fairness, and limits of predicting recidivism" ---------------

DF_PROFILE = (
    "The defendant is a {sex} aged {age}. They have been charged with: {charge}. This crime is classified as a "
    "{degree}. They have been convicted of {priors_count} prior crimes. They have {juv_fel_count} juvenile felony "
    "charges and {juv_misd_count} juvenile misdemeanor charges on their record."
)
DF_CONDITIONS = (  # (condition key, label, pool, agree block, race shown)
    ("no_race", "Race not shown", "defendants", "agree", False),
    ("race", "Race shown", "defendants_race", "agree_race", True),
)
DF_QUESTIONS = (  # (key, text, the release's codes): MTURK_*_DEMOGRAPHICS.csv as the authors' README defines them
    ("age", "What is your age?", WORKER_AGE),
    ("gender", "What is your gender?", WORKER_GENDER),
    ("race", "What is your race?", WORKER_RACE),
    ("education", "What is the highest level of education you have completed?", WORKER_EDUCATION),
)
DF_QUESTIONNAIRE = "demographics"
DF_SLUG = "dressel-farid"


def _df_pool(defendants, key: str, race_shown: bool) -> dict:
    features = ["charge", "degree", "priors_count", "juv_fel_count", "juv_misd_count", "two_year_recid"]
    subjects = [
        {
            "id": str(row.id),
            "features": {
                c: (getattr(row, c) if isinstance(getattr(row, c), str) else int(getattr(row, c))) for c in features
            },
            "groups": {"race": row.race, "sex": row.sex, "age": int(row.age)},
            "models": {"compas": {"score": row.compas_decile_score / 10, "label": int(row.compas_label)}},
        }
        for row in defendants.itertuples()
    ]
    profile = DF_PROFILE.replace("{sex}", "{race} {sex}") if race_shown else DF_PROFILE
    return {
        "key": key,
        "subject_noun": "defendant",
        "outcome_column": "two_year_recid",  # the release's truth: error rates of workers and COMPAS against it
        "subjects": subjects,
        "display": {"profile": profile},
    }


def _df_spec(defendants) -> dict:
    questionnaire = {
        "key": DF_QUESTIONNAIRE,
        "type": "questionnaire",
        "title": "About you",
        "questions": [
            {"key": key, "type": "single_choice", "text": text, "options": list(codes.values()), "required": False}
            for key, text, codes in DF_QUESTIONS
        ],
    }
    agree_blocks = [
        {
            "key": block,
            "type": "task",
            "task": "agree",
            "pool": pool,
            "model": "compas",
            "conditions": [condition],
            "assignment": {"per_participant": 50},
            "question": "Do you think this person will commit another crime within 2 years?",
            "label_names": {"1": "will reoffend", "0": "will not reoffend"},
        }
        for condition, _, pool, block, _ in DF_CONDITIONS
    ]
    return {
        "format": 2,
        "slug": DF_SLUG,
        "title": "Dressel & Farid (2018): crowd predictions of recidivism",
        "description": (
            "Imported from the authors' release. 400 Mechanical Turk workers per condition each predicted whether "
            "50 of 1,000 Broward County defendants would reoffend within two years; in the race condition the "
            "profile also named the defendant's race. Workers gave their own prediction, not a judgement of "
            "COMPAS's: the agree answer is 1 when the prediction equals COMPAS's label (decile score > 4)."
        ),
        "consent": {"text": "Workers consented on Amazon Mechanical Turk (Dressel & Farid 2018)."},
        "completion": {"code": "IMPORTED"},
        "conditions": [{"key": c, "label": label} for c, label, *_ in DF_CONDITIONS],
        "pools": [_df_pool(defendants, pool, shown) for _, _, pool, _, shown in DF_CONDITIONS],
        "blocks": [*agree_blocks, questionnaire],
    }


def dressel_farid_dataset(folder: Path) -> CrowdDataset:
    """Both conditions of the release: the workers' predictions and demographics as completed participants.

    Plan per worker: their block's 50 defendants in the release's order, then the questionnaire. A
    demographics code the README does not define (one worker's gender in the race condition) is left
    unanswered (the questions are optional), not guessed.
    """
    defendants = load_dressel_farid_defendants(folder)
    spec = _df_spec(defendants)
    by_block = defendants.groupby("block")["id"].apply(lambda ids: [str(i) for i in ids]).to_dict()
    participants = []
    for condition, _, _, block, race_shown in DF_CONDITIONS:
        answers = load_dressel_farid(folder, race_shown=race_shown)
        agrees = {
            (w, str(d)): int(p == k)
            for w, d, p, k in answers[["worker", "defendant", "prediction", "compas_label"]].itertuples(index=False)
        }
        for worker in load_dressel_farid_workers(folder, race_shown=race_shown).itertuples(index=False):
            items = by_block[worker.block]
            plan = [
                {"key": f"{block}/{item}", "kind": "agree", "block": block, "item": item, "position": i}
                for i, item in enumerate(items)
            ]
            plan.append({"key": DF_QUESTIONNAIRE, "kind": "questionnaire", "block": DF_QUESTIONNAIRE})
            rows = [
                ImportedAnswer(
                    f"{block}/{item}",
                    task_question(block, item, "agree"),
                    "agree",
                    block,
                    item,
                    agrees[worker.worker, item],
                )
                for item in items
            ]
            rows += [
                ImportedAnswer(
                    DF_QUESTIONNAIRE,
                    questionnaire_question(DF_QUESTIONNAIRE, key),
                    "questionnaire",
                    DF_QUESTIONNAIRE,
                    "",
                    None,
                    value,
                )
                for key, _, codes in DF_QUESTIONS
                if (value := getattr(worker, key)) in codes.values()
            ]
            participants.append(ImportedParticipant(f"{condition}-{worker.worker}", condition, plan, rows))
    return CrowdDataset(spec, participants)


# --- Biswas et al. (2020), "The role of in-group bias and balanced data" (TurkPrime survey) ----------------

BISWAS_SLUG = "biswas"
BISWAS_BLOCK = "predict"
BISWAS_QUESTIONNAIRE = "about_you"
BISWAS_CONDITION = "main"
BISWAS_FEATURES = {  # feature -> the release's column
    "charge": "c_charge_desc",
    "degree": "c_charge_degree",
    "priors_count": "priors_count",
    "juv_fel_count": "juv_fel_count",
    "juv_misd_count": "juv_misd_count",
    "juv_other_count": "juv_other_count",
    "two_year_recid": "two_year_recid",
}
BISWAS_DEGREES = {"F": "felony", "M": "misdemeanor"}
BISWAS_QUESTIONS = (  # (key, the release's column, text)
    ("race", "resp_race", "What is your race?"),
    ("gender", "resp_gender", "What is your gender?"),
    ("state", "resp_state", "In which state do you live?"),
    ("political_views", "resp_polview", "How would you describe your political views?"),
    ("education", "resp_educ4", "What is the highest level of education you have completed?"),
    ("reason", "resp_reason", "What mattered most in your decisions?"),
    ("age", "resp_age", "What is your age?"),
)


def _biswas_spec(rows) -> dict:
    defendants = rows.drop_duplicates("def_id").sort_values("def_id")
    subjects = [
        {
            "id": str(row.def_id),
            "features": {
                name: BISWAS_DEGREES[value] if name == "degree" else (value if isinstance(value, str) else int(value))
                for name, column in BISWAS_FEATURES.items()
                if (value := getattr(row, column)) is not None
            },
            "groups": {"race": row.def_race, "sex": row.def_gender.lower(), "age": int(row.def_age)},
            "models": {"compas": {"score": row.decile_score / 10, "label": int(row.compas_label)}},
        }
        for row in defendants.itertuples()
    ]
    profile = DF_PROFILE.replace("{sex}", "{race} {sex}")
    questions = []
    for key, column, text in BISWAS_QUESTIONS:
        if key == "age":
            questions.append({"key": key, "type": "number", "text": text, "min": 18, "max": 99, "integer": True})
        else:
            values = rows[column].map(BISWAS_EDUCATION) if key == "education" else rows[column]
            questions.append({"key": key, "type": "single_choice", "text": text, "options": sorted(values.unique())})
    for question in questions:
        question["required"] = False
    return {
        "format": 2,
        "slug": BISWAS_SLUG,
        "title": "Biswas et al. (2020): in-group bias in crowd predictions of recidivism",
        "description": (
            "Imported from the authors' TurkPrime release (COMPASS 2020). 988 US respondents, half African-American "
            "and half Caucasian, each predicted whether 20 of 1,000 Broward County defendants (half African-American, "
            "half Caucasian) would reoffend; the profile named the defendant's race. The agree answer is 1 when the "
            "prediction equals COMPAS's label (decile score > 4); the respondents' demographics and the reason "
            "they gave are the questionnaire."
        ),
        "consent": {"text": "Respondents consented on TurkPrime (Biswas et al. 2020)."},
        "completion": {"code": "IMPORTED"},
        "conditions": [{"key": BISWAS_CONDITION, "label": "TurkPrime survey"}],
        "pools": [
            {
                "key": "defendants",
                "subject_noun": "defendant",
                "outcome_column": "two_year_recid",
                "subjects": subjects,
                "display": {"profile": profile},
            }
        ],
        "blocks": [
            {
                "key": BISWAS_BLOCK,
                "type": "task",
                "task": "agree",
                "pool": "defendants",
                "model": "compas",
                "assignment": {"per_participant": 20},
                "question": "Do you think this person will commit another crime within 2 years?",
                "label_names": {"1": "will reoffend", "0": "will not reoffend"},
            },
            {"key": BISWAS_QUESTIONNAIRE, "type": "questionnaire", "title": "About you", "questions": questions},
        ],
    }


def biswas_dataset(folder: Path) -> CrowdDataset:
    """The 988 respondents (``fairness.datasets.load_biswas``) as completed participants: plan = their 20
    vignettes in the release's order, then the questionnaire (demographics and reason as text, age as a
    number; the 19 respondents without an age leave it unanswered); one ``agree`` answer per vignette."""
    rows = load_biswas(folder)
    spec = _biswas_spec(rows)
    participants = []
    for respondent, own in rows.groupby("respondent", sort=False):
        items = [str(d) for d in own["def_id"]]
        plan = [
            {"key": f"{BISWAS_BLOCK}/{item}", "kind": "agree", "block": BISWAS_BLOCK, "item": item, "position": i}
            for i, item in enumerate(items)
        ]
        plan.append({"key": BISWAS_QUESTIONNAIRE, "kind": "questionnaire", "block": BISWAS_QUESTIONNAIRE})
        answers = [
            ImportedAnswer(
                f"{BISWAS_BLOCK}/{item}",
                task_question(BISWAS_BLOCK, item, "agree"),
                "agree",
                BISWAS_BLOCK,
                item,
                int(decision == label),
            )
            for item, decision, label in zip(items, own["resp_decision"], own["compas_label"], strict=True)
        ]
        person = own.iloc[0]
        for key, column, _ in BISWAS_QUESTIONS:
            value = person[column]
            if value != value:  # a missing age
                continue
            number = float(value) if key == "age" else None
            text = BISWAS_EDUCATION[value] if key == "education" else str(int(value) if key == "age" else value)
            answers.append(
                ImportedAnswer(
                    BISWAS_QUESTIONNAIRE,
                    questionnaire_question(BISWAS_QUESTIONNAIRE, key),
                    "questionnaire",
                    BISWAS_QUESTIONNAIRE,
                    "",
                    number,
                    text,
                )
            )
        participants.append(ImportedParticipant(str(respondent), BISWAS_CONDITION, plan, answers))
    return CrowdDataset(spec, participants)


@dataclass(frozen=True)
class CrowdSource:
    build: Callable[[Path], CrowdDataset]
    default_path: Path
    slug: str


SOURCES: dict[str, CrowdSource] = {
    "dressel-farid": CrowdSource(dressel_farid_dataset, REFERENCE_DATA / "dressel_farid", DF_SLUG),
    "biswas": CrowdSource(biswas_dataset, REFERENCE_DATA / "biswas_turkprime", BISWAS_SLUG),
}


@transaction.atomic
def crowd_study_import(
    *, source: str, path: Path | None = None, slug: str | None = None, owner=None
) -> CrowdImportResult:
    """Store ``source``'s release as a completed study (module doc); ``slug`` overrides the source's.

    A slug of a researcher's study is refused (StudyOwnedByOther) unless ``owner`` is that researcher
    or has ``studies.load_any_study``: unlike ``load_study``, no ``owner`` is no licence to replace someone's study."""
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; known: {', '.join(sorted(SOURCES))}")
    folder = Path(path) if path is not None else SOURCES[source].default_path
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (pass the release's folder with --path)")
    slug = slug or SOURCES[source].slug
    done = _already_imported(slug, owner)
    if done is not None:
        return done
    return _store(SOURCES[source].build(folder), slug, owner)


def _already_imported(slug: str, owner) -> CrowdImportResult | None:
    """Refuse another researcher's slug (StudyOwnedByOther); the stored study when it has participants."""
    latest = Study.objects.filter(slug=slug).order_by("-version").only("owner").first()
    if latest is not None and latest.owner_id is not None and (owner is None or not may_load_version(owner, latest)):
        raise StudyOwnedByOther(slug_taken(slug))  # without an owner too: an import is not a new version
    imported = Participant.objects.filter(study__slug=slug).order_by("-study__version").values("study_id").first()
    if imported is None:
        return None
    existing = Study.objects.get(pk=imported["study_id"])
    answers = Answer.objects.filter(participant__study=existing).count()
    return CrowdImportResult(existing, "already_imported", existing.participants.count(), answers)


def _store(dataset: CrowdDataset, slug: str, owner) -> CrowdImportResult:
    """The study version through ``study_load``, then participants and answers with ``bulk_create``."""
    spec = {**dataset.spec, "slug": slug}
    study = study_load(spec=spec, owner=owner).study
    conditions = {c.key: c for c in study.conditions.all()}
    now = timezone.now()
    people = Participant.objects.bulk_create(
        [
            Participant(
                study=study,
                condition=conditions[p.condition],
                external_id=p.external_id,
                status=Participant.Status.COMPLETED,
                seed=0,
                plan=p.plan,
                position=len(p.plan),
                arrived_at=now,
                consented_at=now,
                completed_at=now,
            )
            for p in dataset.participants
        ],
        batch_size=1000,
    )
    rows = [
        Answer(participant=person, **vars(a))
        for person, p in zip(people, dataset.participants, strict=True)
        for a in p.answers
    ]
    Answer.objects.bulk_create(rows, batch_size=5000)
    return CrowdImportResult(study, "imported", len(people), len(rows))
