import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from participation.models import Participant
from runs.models import AnalysisRun, AuditRun

DEMO_FILE = Path(settings.BASE_DIR) / "studies" / "bundled" / "effort_demo.json"
PASSWORD_FILE = Path(settings.BASE_DIR) / ".demo-password"


class Command(BaseCommand):
    help = "Prepare the demo: researcher account, demo study, simulated participants, an analysis; print links."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=150, help="simulated participants of the demo study")
        parser.add_argument("--host", default="http://127.0.0.1:8000", help="the server address the printed links use")

    def handle(self, *args, participants, host, **options):
        username = os.environ.get("DEMO_RESEARCHER", "researcher")
        password = os.environ.get("DEMO_PASSWORD") or (
            PASSWORD_FILE.read_text().strip() if PASSWORD_FILE.exists() else secrets.token_urlsafe(12)
        )
        PASSWORD_FILE.write_text(password)
        PASSWORD_FILE.chmod(0o600)
        user, _ = get_user_model().objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": True}
        )
        user.set_password(password)
        user.save()
        call_command("load_study", str(DEMO_FILE), owner=username, stdout=self.stdout)
        if not Participant.objects.filter(study__slug="effort-demo", simulated=True).exists():
            call_command(
                "simulate_participants", "effort-demo", n=participants, seed=1, stdout=self.stdout, stderr=self.stderr
            )
        if not AnalysisRun.objects.filter(study__slug="effort-demo").exists():
            call_command("analyze_study", "effort-demo", seed=1, stdout=self.stdout, stderr=self.stderr)
        if not AuditRun.objects.filter(study__slug="effort-demo").exists():
            subjects = Path(settings.REPORTS_DIR) / "demo-subjects-arrests.csv"
            call_command("generate_demo_audit", condition="arrests", out=str(subjects), stdout=self.stdout)
            call_command(
                "audit_models",
                study="effort-demo",
                subjects=str(subjects),
                condition="arrests",
                stdout=self.stdout,
                stderr=self.stderr,
            )
        self.stdout.write(
            "\n"
            f"  Participant link : {host}/s/effort-demo/?participant_label=demo-{secrets.token_hex(3)}\n"
            f"  Researcher login : {host}/accounts/login/  user '{username}', password '{password}'\n"
            f"  Dashboard        : {host}/researcher/studies/effort-demo/\n"
        )
