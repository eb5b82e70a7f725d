from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from participation.judgements import TASKS, JudgementColumns, judgements_import
from studies.management.owner import owner_named
from studies.services import StudyOwnedByOther
from studies.study_file import InvalidStudyFile


class Command(BaseCommand):
    help = (
        "Import judgements collected elsewhere (one CSV row per judgement) as a completed study, once: "
        "participants, answers and questionnaire answers (participation/judgements.py)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the CSV file (long form: one row per judgement)")
        parser.add_argument("--task", required=True, choices=TASKS, help="the task type the judgements are")
        parser.add_argument("--slug", required=True, help="the study's slug")
        parser.add_argument("--title", default="", help="the study's title")
        parser.add_argument("--owner", help="username of the researcher who owns the study")
        parser.add_argument("--participant", required=True, help="column: the participant's id")
        parser.add_argument(
            "--answer",
            required=True,
            help="column: the answer (0/1, a number, or the chosen id: choose, and triplet's more similar subject)",
        )
        parser.add_argument("--item", help="column: the subject's id (agree, rate)")
        parser.add_argument("--a", help="column: the pair's first subject (choose, pair_comparable)")
        parser.add_argument(
            "--b", help="column: the pair's second subject (choose, pair_comparable); the triplet's first other"
        )
        parser.add_argument("--anchor", help="column: the triplet's anchor (triplet)")
        parser.add_argument("--c", help="column: the triplet's second other (triplet)")
        parser.add_argument("--questionnaire", nargs="*", default=[], help="columns: the participant's answers")
        parser.add_argument("--group", nargs="*", default=[], help="columns: the subjects' groups (e.g. race)")
        parser.add_argument("--feature", nargs="*", default=[], help="columns: the subjects' features")
        parser.add_argument("--model-label", help="column: the AI's 0/1 label of the subject (agree needs it)")
        parser.add_argument("--model-score", help="column: the AI's score of the subject")
        parser.add_argument("--decision", help="choose: what the chosen subject gets (default 'be chosen')")
        parser.add_argument(
            "--scale-min", type=float, help="rate: the scale's lowest value (default: the lowest given)"
        )
        parser.add_argument("--scale-max", type=float, help="rate: the scale's highest value (default: the highest)")

    def handle(self, *args, **opts):
        columns = JudgementColumns(
            participant=opts["participant"],
            answer=opts["answer"],
            item=opts["item"],
            a=opts["a"],
            b=opts["b"],
            anchor=opts["anchor"],
            c=opts["c"],
            questionnaire=tuple(opts["questionnaire"]),
            groups=tuple(opts["group"]),
            features=tuple(opts["feature"]),
            model_label=opts["model_label"],
            model_score=opts["model_score"],
        )
        options = {"decision": opts["decision"], "min": opts["scale_min"], "max": opts["scale_max"]}
        try:
            result = judgements_import(
                path=Path(opts["file"]),
                task=opts["task"],
                columns=columns,
                slug=opts["slug"],
                title=opts["title"],
                owner=owner_named(opts["owner"]),
                options=options,
            )
        except (FileNotFoundError, ValueError, InvalidStudyFile, StudyOwnedByOther) as exc:
            raise CommandError(str(exc)) from exc
        imported = result.action != "already_imported"
        self.stdout.write(self.style.SUCCESS(result.message) if imported else result.message)
