import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from runs.preregistration import RegistrationError, preregister, verify_bundle
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = (
        "Preregister a study: freeze its version, the analysis plan, the code version and the requirements into a "
        "hashed bundle with a simulated run of the planned analysis (or --verify a bundle's hashes)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", nargs="?", help="the study to register (not with --verify)")
        parser.add_argument(
            "--plan",
            help="the analysis plan (JSON: analyses [{name, by}], include_incomplete, include_pilot, generalise, "
            "multiple_testing, min_group_size, min_subject_group, pool_small, bins, seed, n_resamples, sample_size, "
            "hypotheses); default: analyze_study's defaults with the study file's analysis section",
        )
        parser.add_argument(
            "--by", action="append", default=[], metavar="QUESTION", help="without --plan: the planned analysis's split"
        )
        parser.add_argument("--out", help="the folder the bundle is written into (new or empty)")
        parser.add_argument("--user", help="username recorded as registering it (default: none, the command line)")
        parser.add_argument("--verify", metavar="DIR", help="check a bundle folder's files against its manifest")

    def handle(self, *args, slug, plan, by, out, user, verify, **options) -> None:
        if verify:
            problems = verify_bundle(Path(verify))
            if problems:
                raise CommandError(f"{verify}: the bundle does not match its manifest:\n" + "\n".join(problems))
            files = json.loads((Path(verify) / "manifest.json").read_text())["files"]
            self.stdout.write(self.style.SUCCESS(f"{verify}: all {len(files)} files match their registered sha256"))
            return
        if not slug or not out:
            raise CommandError("give the study's slug and --out DIR (or --verify DIR)")
        try:
            data = json.loads(Path(plan).read_text()) if plan else None
        except (OSError, ValueError) as exc:
            raise CommandError(f"--plan {plan}: {exc}") from exc
        if data is not None and not isinstance(data, dict):
            raise CommandError(f"--plan {plan}: a JSON object of plan fields")
        account = None
        if user:
            account = get_user_model().objects.filter(username=user).first()
            if account is None:
                raise CommandError(f"--user {user}: no such account")
        try:
            registration = preregister(slug, Path(out), plan=data, by=by, user=account)
        except (StudyNotFound, RegistrationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"{slug} version {registration.study.version} registered at "
                f"{registration.registered_at:%Y-%m-%d %H:%M} "
                f"UTC; bundle: {out} (manifest sha256 {registration.manifest_sha256})"
            )
        )
