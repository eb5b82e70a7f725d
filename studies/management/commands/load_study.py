from django.core.management.base import BaseCommand, CommandError

from studies.management.owner import owner_named
from studies.services import StudyOwnedByOther, study_load
from studies.study_file import InvalidStudyFile, read_study_file


class Command(BaseCommand):
    help = "Validate a study file and load it (same file again: no change; changed file with answers: new version)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the study file (JSON, format 1 or 2)")
        parser.add_argument("--owner", help="username of the researcher who owns the study")

    def handle(self, *args, file, owner=None, **options):
        user = owner_named(owner)
        try:
            spec = read_study_file(file)
            result = study_load(spec=spec, owner=user)
        except InvalidStudyFile as exc:
            raise CommandError(f"{file}: {exc}") from exc
        except StudyOwnedByOther as exc:
            raise CommandError(str(exc)) from exc
        messages = {
            "created": "created",
            "unchanged": "unchanged (same content already loaded)",
            "replaced": "updated in place (no participants yet)",
            "new_version": "saved as a new version (the previous one has participants)",
        }
        study = result.study
        self.stdout.write(self.style.SUCCESS(f"{study.slug} v{study.version}: {messages[result.action]}"))
