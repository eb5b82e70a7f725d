import json
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from core.uploads import UploadError
from studies.builder import TEMPLATES, StudyBuildError, build_study, study_file_bytes, summarise_study
from studies.study_file import InvalidStudyFile, validate_study


class Command(BaseCommand):
    help = (
        "Write a complete format 2 study file (consent, instructions, stakeholder questionnaire, attention checks, "
        "the task block) built from a CSV of decision subjects; edit it, then load it with load_study."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--template",
            required=True,
            choices=TEMPLATES,
            help="the task the study asks (a task type's builder template)",
        )
        parser.add_argument("--subjects", required=True, metavar="FILE.csv", help="one row per subject")
        parser.add_argument("--id-column", required=True, metavar="COL", help="the CSV column with each subject's id")
        parser.add_argument("--label-column", metavar="COL", help="the AI's 0/1 label")
        parser.add_argument("--score-column", metavar="COL", help="the AI's score in [0, 1]")
        parser.add_argument("--group-columns", nargs="+", default=[], metavar="COL", help="e.g. race sex")
        parser.add_argument(
            "--outcome-column", metavar="COL", help="the true outcome (0/1, not shown): error rates against it"
        )
        parser.add_argument(
            "--model-label-columns",
            nargs="+",
            default=[],
            metavar="COL",
            help="other models' 0/1 labels (not shown), each model named by its column: the tradeoff template "
            "compares them (with the AI's --label-column)",
        )
        parser.add_argument(
            "--feature-columns",
            nargs="+",
            metavar="COL",
            help="the columns shown as features (what the estimators weigh and pairs are drawn by); default: the "
            "profile's columns that are not groups, or without a profile every column not named otherwise; columns "
            "named nowhere are kept hidden (left out of the study file)",
        )
        parser.add_argument("--profile", help='text with {column} placeholders, e.g. "A {sex} aged {age}."')
        parser.add_argument("--per-participant", type=int, metavar="M", help="items per participant (default all)")
        parser.add_argument("--stratify-by", metavar="COL", help="M / k items from each of the column's k values")
        parser.add_argument(
            "--decision", help="the decision the choice and feature_fairness questions name (default per template)"
        )
        parser.add_argument(
            "--mix",
            nargs="+",
            default=[],
            metavar="RELATION",
            help="relations drawn per subject: near far random (pairs), near-far near-random random (triplets)",
        )
        parser.add_argument(
            "--allow-tie",
            action="store_true",
            help='choice template: an "Equally / cannot decide" answer beside the two people (analysed as '
            "Davidson ties of the Bradley-Terry model)",
        )
        parser.add_argument("--slug", help="the study's URL name (default: the CSV file's name and the template)")
        parser.add_argument("--title", help="the study's title shown to participants")
        parser.add_argument(
            "--completion-code",
            help="the completion code shown on the last page (Prolific's; default: one derived from the subjects)",
        )
        parser.add_argument("--out", required=True, metavar="STUDY.json", help="the study file to write")
        parser.add_argument(
            "--participants",
            type=int,
            default=150,
            metavar="N",
            help="the participants you plan: the design check simulates the study at this size (default 150)",
        )
        parser.add_argument(
            "--no-design-check",
            dest="design_check",
            action="store_false",
            help="skip the design check (plan_study on the written file, split by the stakeholder role)",
        )

    def handle(self, *args, **options):
        if options["design_check"] and not 4 <= options["participants"] <= 5000:
            raise CommandError(f"--participants must be from 4 to 5000, got {options['participants']}")
        try:
            spec = build_study(
                options["template"],
                options["subjects"],
                options["id_column"],
                label_column=options["label_column"],
                score_column=options["score_column"],
                group_columns=options["group_columns"],
                outcome_column=options["outcome_column"],
                model_label_columns=options["model_label_columns"],
                feature_columns=options["feature_columns"],
                profile=options["profile"],
                per_participant=options["per_participant"],
                stratify_by=options["stratify_by"],
                slug=options["slug"],
                title=options["title"],
                completion_code=options["completion_code"],
                decision=options["decision"],
                mix=options["mix"],
                allow_tie=options["allow_tie"],
            )
            summary = summarise_study(validate_study(spec))
            raw = study_file_bytes(spec, max_bytes=settings.STUDY_FILE_MAX_BYTES)
        except StudyBuildError as exc:
            raise CommandError("\n".join(["the study cannot be built:", *exc.problems])) from exc
        except UploadError as exc:
            raise CommandError(str(exc)) from exc
        except InvalidStudyFile as exc:  # an option that reaches the file unchecked, e.g. a bad --slug
            raise CommandError(f"the built study is not valid: {exc}") from exc
        Path(options["out"]).write_bytes(raw)
        self.stdout.write(
            self.style.SUCCESS(
                f"wrote {options['out']}: {summary.slug}, {summary.pool_size} subjects, "
                f"{summary.per_participant} items and {summary.pages_per_participant} pages per participant"
            )
        )
        if options["design_check"]:
            self._design_check(options["out"], options["participants"])

    def _design_check(self, path: str, participants: int) -> None:
        """plan_study's design check of the written file at ``participants``, split by the questionnaire's
        stakeholder role (``studies.builder.stakeholder_questionnaire``): its warnings in plain words."""
        out = StringIO()
        try:
            call_command(
                "plan_study", "--study-file", path, "--n", str(participants), "--by", "role", "--json", stdout=out
            )
        except CommandError as exc:
            raise CommandError(f"wrote {path}, but the design check failed: {exc}") from exc
        check = json.loads(out.getvalue())["design_check"]
        self.stdout.write(
            f"design check: {check['replications']} simulated runs of {participants} participants in "
            f"{check['rater_groups']} rater groups (role), {check['seconds']:.0f} s"
        )
        for warning in check["warnings"]:
            self.stdout.write(self.style.WARNING(f"Warning: {warning}"))
        if not check["warnings"]:
            self.stdout.write("no warning: every block's estimates are identified overall and per group at this size")
