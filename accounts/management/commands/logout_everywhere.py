from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.services import user_sessions_end


class Command(BaseCommand):
    help = (
        "End every session of a researcher (all browsers and devices) and revoke their API tokens; "
        "they must log in again."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="the researcher to log out of every session")

    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        sessions, tokens = user_sessions_end(user=user)
        self.stdout.write(self.style.SUCCESS(f"{username}: {sessions} session(s) ended, {tokens} API token(s) revoked"))
