from django.core.management.base import BaseCommand, CommandError

from participation.imports import SOURCES, crowd_study_import
from studies.management.owner import owner_named
from studies.services import StudyOwnedByOther
from studies.study_file import InvalidStudyFile


class Command(BaseCommand):
    help = "Import a public crowd dataset as a completed study (its participants and answers), once."

    def add_arguments(self, parser):
        parser.add_argument("source", choices=sorted(SOURCES), help="which release")
        parser.add_argument("--path", help="the release's folder (default: ../shared/reference-data/<release>)")
        parser.add_argument("--slug", help="the study's slug (default: the source's name)")
        parser.add_argument("--owner", help="username of the researcher who owns the study")

    def handle(self, *args, source, path=None, slug=None, owner=None, **options):
        user = owner_named(owner)
        try:
            result = crowd_study_import(source=source, path=path, slug=slug, owner=user)
        except (FileNotFoundError, ValueError, InvalidStudyFile, StudyOwnedByOther) as exc:
            raise CommandError(str(exc)) from exc
        imported = result.action != "already_imported"
        self.stdout.write(self.style.SUCCESS(result.message) if imported else result.message)
