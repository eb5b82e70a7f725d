from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.models import ApiToken
from accounts.services import TokenLimitReached, api_token_create, api_token_revoke


class Command(BaseCommand):
    help = (
        "Create an API token for a researcher and print its key once (only a hash is stored); "
        "--list shows their tokens, --revoke ID or --revoke-all revokes."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="the researcher whose tokens to create, list or revoke")
        parser.add_argument("--name", default="API token", help="What the token is for (shown in lists).")
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--list", dest="list_tokens", action="store_true", help="List the researcher's tokens (never their keys)."
        )
        action.add_argument("--revoke", type=int, metavar="ID", help="Revoke the token with this id.")
        action.add_argument("--revoke-all", action="store_true", help="Revoke every token of the researcher.")

    def handle(self, *args, username, name, list_tokens, revoke, revoke_all, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if list_tokens:
            for token in ApiToken.objects.filter(user=user):
                used = token.last_used_at.isoformat(timespec="seconds") if token.last_used_at else "never"
                created = f"{token.created_at:%Y-%m-%d}"
                expires = f"{token.expires_at:%Y-%m-%d}" if token.expires_at else "never"
                self.stdout.write(
                    f"{token.pk}\t{token.prefix}…\t{token.name}\tcreated {created}\tused {used}\texpires {expires}"
                )
            return
        if revoke is not None or revoke_all:
            count = api_token_revoke(user=user, token_id=revoke)
            if revoke is not None and count == 0:
                raise CommandError(f"{username} has no token with id {revoke}; see --list")
            self.stdout.write(self.style.SUCCESS(f"{username}: {count} token(s) revoked"))
            return
        try:
            token, key = api_token_create(user=user, name=name)
        except TokenLimitReached as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"Token {token.pk} ({token.name}) for {username}; the key is shown only now:")
        self.stdout.write(key)
