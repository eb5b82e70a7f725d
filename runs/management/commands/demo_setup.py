import os
import secrets
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from participation.models import Participant
from runs.models import AnalysisRun, AuditRun

DEMO_FILE = Path(settings.BASE_DIR) / "studies" / "bundled" / "effort_demo.json"
PASSWORD_FILE = Path(settings.BASE_DIR) / ".demo-password"


class Command(BaseCommand):
    help = "Prepare the demo: researcher account, demo study, simulated participants, an analysis; print links."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=150, help="simulated participants of the demo study")
        parser.add_argument("--host", default="http://127.0.0.1:8000", help="the server address the printed links use")
        links = parser.add_mutually_exclusive_group()
        links.add_argument(
            "--no-links", action="store_true", help="prepare the demo without printing the links and credentials"
        )
        links.add_argument(
            "--links-only",
            action="store_true",
            help="print the links and credentials of a prepared demo, nothing else (make demo: last)",
        )
        parser.add_argument(
            "--wait-for-server",
            type=float,
            default=0,
            metavar="SECONDS",
            help="with --links-only: first wait up to SECONDS for the server at --host to accept connections "
            "(then a second more, so the server's and job workers' start-up lines come first)",
        )

    def handle(self, *args, participants, host, no_links, links_only, wait_for_server, **options):
        username = os.environ.get("DEMO_RESEARCHER", "researcher")
        if links_only:
            if not PASSWORD_FILE.exists():
                raise CommandError("no demo prepared here: run manage.py demo_setup first")
            if wait_for_server and not server_up(host, wait_for_server):
                raise CommandError(f"no server at {host} after {wait_for_server:g} s")
            self.stdout.write(links(host, username, PASSWORD_FILE.read_text().strip()))
            return
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
        if not no_links:
            self.stdout.write(links(host, username, password))


def links(host: str, username: str, password: str) -> str:
    """The demo's participant link, researcher login and dashboard, as printed."""
    return (
        "\n"
        f"  Participant link : {host}/s/effort-demo/?participant_label=demo-{secrets.token_hex(3)}\n"
        f"  Researcher login : {host}/accounts/login/  user '{username}', password '{password}'\n"
        f"  Dashboard        : {host}/researcher/studies/effort-demo/\n"
    )


def server_up(host: str, timeout: float, settle: float = 1.0) -> bool:
    """Whether the server at ``host`` (``http://name:port``) accepts a TCP connection within ``timeout``
    seconds (a bare connection: the server logs no request); then ``settle`` seconds more."""
    address = urlsplit(host)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((address.hostname or "127.0.0.1", address.port or 80), timeout=1).close()
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)
        else:
            time.sleep(settle)
            return True
