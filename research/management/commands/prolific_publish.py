import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.cli_args import at_least_one, checked
from research.prolific_actions import published_sentence
from research.prolific_client import ProlificClient, ProlificError
from research.prolific_services import prolific_publish, start_link
from studies.services import StudyNotFound


class Command(BaseCommand):
    help = (
        "Create the study on Prolific through its API (title, description, the start link, a completion code "
        "per outcome), store its Prolific id and publish it unless --draft. Again for a published study: "
        "nothing changes."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study to put on Prolific")
        parser.add_argument("--places", type=at_least_one("--places"), required=True, help="participants wanted")
        parser.add_argument(
            "--reward", type=at_least_one("--reward"), required=True, help="reward per participant in cents"
        )
        parser.add_argument(
            "--minutes", type=at_least_one("--minutes"), required=True, help="estimated completion time in minutes"
        )
        parser.add_argument("--filters", help="JSON file with Prolific's eligibility filters (a list)")
        parser.add_argument("--draft", action="store_true", help="create the Prolific draft without publishing it")

    def handle(self, *args, slug, places, reward, minutes, filters, draft, **options):
        places, reward, minutes = (
            checked(places, at_least_one("--places")),
            checked(reward, at_least_one("--reward")),
            checked(minutes, at_least_one("--minutes")),
        )
        chosen = None
        if filters:
            try:
                chosen = json.loads(Path(filters).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"--filters {filters}: {exc}") from None
            if not isinstance(chosen, list):
                raise CommandError(f"--filters {filters}: Prolific's filters are a JSON list")
        try:
            result = prolific_publish(
                slug=slug,
                places=places,
                reward_cents=reward,
                minutes=minutes,
                filters=chosen,
                draft=draft,
                client=ProlificClient(),
            )
        except (StudyNotFound, ProlificError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(published_sentence(slug, result))
        self.stdout.write(f"Study URL on Prolific: {start_link(slug)}")
