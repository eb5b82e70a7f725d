from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core import strict_json
from studies.format1 import format1_to_format2
from studies.study_file import InvalidStudyFile, read_study_file, validate_study


class Command(BaseCommand):
    help = "Write a format 1 study file as a format 2 file (blocks over item pools; docs: 'Study file format 1')."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the format 1 study file")
        parser.add_argument("--out", required=True, help="where to write the format 2 file")

    def handle(self, *args, file, out, **options):
        try:
            spec = read_study_file(file)
        except InvalidStudyFile as exc:
            raise CommandError(f"{file}: {exc}") from exc
        if spec["format"] != 1:
            raise CommandError(f"{file}: format: is already {spec['format']}; only format 1 files are converted")
        converted = format1_to_format2(spec)
        try:
            validate_study(converted)
        except InvalidStudyFile as exc:  # e.g. two keys that only differ beyond 40 characters
            raise CommandError(f"{file}: the converted file is not a valid format 2 file: {exc}") from exc
        Path(out).write_text(strict_json.dumps(converted, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        blocks = len(converted["blocks"])
        self.stdout.write(
            self.style.SUCCESS(f"wrote {out}: format 2, {blocks} blocks, {len(converted['pools'])} pools")
        )
