"""The bot of the load client and the tests: a participant's current page answered by its task type's
``fill`` (``tasks.base.TaskType.fill``), never read off the page's HTML.

The page and what it shows come from the database as the page view reads them: the participant's plan
(``participation.enrolment``), their position in it and their language, their study version's file in that
language and their condition's page index (``participation.pages.condition_index``); a slot page of an
adaptive block gets the item decided for it when it was shown (``participation.adaptive.resolved_page``).
So the bot runs in a process with Django set up on the server's database: a test's, or ``bench/launch.py``'s
(``participation.loadclient`` calls it from its event loop through ``asgiref``'s ``sync_to_async``).
"""

import numpy as np

from participation.adaptive import resolved_page
from participation.enrolment import cached_enrolment
from participation.models import Participant
from participation.pages import condition_index
from studies.study_facts import study_facts
from studies.translation import localized
from tasks import task_for

ANSWERING = (Participant.Status.ACTIVE, Participant.Status.TIMED_OUT)  # the statuses the page view serves pages to


class NoPageToAnswer(LookupError):
    """The participant has no page to answer (not consented, finished, or no such participant)."""


def participant_id_of(slug: str, external_id: str) -> int:
    """The id of the latest participant of study ``slug`` who arrived as ``external_id`` (PROLIFIC_PID or
    participant_label)."""
    found = (
        Participant.objects.filter(study__slug=slug, external_id=external_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise NoPageToAnswer(f"no participant {external_id!r} in study {slug!r}")
    return found


class PageBot:
    """One participant's bot. What does not change while they take the study (their enrolment and language) is
    read once; :meth:`position` reads where they are, :meth:`answers` answers the page at a position."""

    def __init__(self, participant_id: int, *, seed: int = 0) -> None:
        language = Participant.objects.filter(pk=participant_id).values_list("language", flat=True).first()
        enrolment = cached_enrolment(participant_id)
        if language is None or enrolment is None:
            raise NoPageToAnswer(f"participant {participant_id} does not exist or has not consented")
        self.participant_id, self.seed, self.language, self.enrolment = participant_id, seed, language, enrolment

    def position(self) -> int:
        """The place in the plan of the participant's current page, from the database."""
        position, status = Participant.objects.values_list("position", "status").get(pk=self.participant_id)
        if status not in ANSWERING or position >= len(self.enrolment.plan):
            raise NoPageToAnswer(f"participant {self.participant_id} has no page to answer (status {status})")
        return position

    def answers(self, position: int) -> dict[str, str | list[str]]:
        """The POST data of the page at ``position``: its ``page_key`` and its task type's ``fill``, drawn from a
        generator seeded by (``seed``, ``position``), so a page resent is answered the same way."""
        enrolment = self.enrolment
        facts = study_facts(enrolment.study_id, enrolment.condition_id)
        spec, spec_key = localized(facts.spec, facts.spec_hash, self.language)
        index = condition_index(spec, spec_key, facts.condition_keys[enrolment.condition_id])
        page = resolved_page(
            enrolment.plan[position], index, participant_id=self.participant_id, study_id=enrolment.study_id
        )
        return {
            "page_key": page["key"],
            **task_for(page).fill(page, index, np.random.default_rng([self.seed, position])),
        }


def page_answers(participant_id: int, *, seed: int = 0) -> dict[str, str | list[str]]:
    """The POST data of the participant's current page (:class:`PageBot`)."""
    bot = PageBot(participant_id, seed=seed)
    return bot.answers(bot.position())
