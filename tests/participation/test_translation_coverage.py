"""No English platform text on a German page: a two-language study with every page kind and every task
type (every text of the file given in English and German), a German participant taken through each page
kind in the test client (every form page also sent empty, for its error messages; screening, quota
screened-out, decline, withdrawal, time-out, resume, completion), and every page searched for the English
texts of the platform's catalogue (``locale/de/LC_MESSAGES/django.po``: each msgid whose German differs,
its placeholders matching any text)."""

import html
import json
import re

import pytest
from django.utils import timezone

from participation.models import Participant
from participation.page_bot import page_answers
from studies.format2 import BLOCK_TYPES, SCHEMA
from studies.translation import _get, shown_paths
from tasks import BLOCK_TASKS
from tasks.detection import CHECKS
from tests.participation.format2_helpers import EXAMPLE
from tests.tasks.test_agree_one_page import one_page_spec
from tests.tasks.test_choose import choice_spec
from tests.tasks.test_feature_fairness import feature_spec
from tests.tasks.test_rank import rank_spec
from tests.tasks.test_tradeoff import tradeoff_spec
from tests.tasks.test_triplet import triplet_spec
from tests.test_locale import CATALOGUE, read_po

ROLE = "Member of the public"  # the quota's group: the first participant fills it
OTHER_ROLE = "Works in criminal justice"
PAGE_KINDS = set(BLOCK_TASKS) | set(BLOCK_TYPES) - {"task"}


def every_page_spec() -> dict:
    """The format 2 example (instructions, every question type, attention, agree, rate, pair_comparable,
    pair_distance, fair_score) with a block of each other task type (choose, triplet, feature_fairness,
    agree on one page, each over its own pool), a detection item of each check, screening, a quota and a
    time limit; few items per block."""
    spec = json.loads(EXAMPLE.read_text())
    spec["slug"] = "every-page-de"
    del spec["conditions"]
    for block in spec["blocks"]:
        block.pop("conditions", None)
        if block.get("assignment", {}).get("per_participant"):
            block["assignment"] = {"per_participant": 1}
    others = ((choice_spec, "loan"), (triplet_spec, "triple"), (feature_spec, "uses"), (rank_spec, "order"))
    for build, key in (*others, (tradeoff_spec, "fairer"), (one_page_spec, "one")):
        other = build()
        (task,) = [b for b in other["blocks"] if b["type"] == "task"]
        pool = other["pools"][0] | {"key": f"pool_{key}"}
        task |= {"key": key, "pool": pool["key"]}
        if task["task"] in ("choose", "triplet", "rank", "tradeoff"):
            task["assignment"] = {"per_participant": 1}
        spec["pools"].append(pool)
        spec["blocks"].append(task)
    spec["blocks"][-1:-1] = [{"key": f"d_{check}", "type": "detection", "check": check} for check in CHECKS]
    spec["screening"] = {"question": "Do you live in Europe?", "options": ["Yes", "No"], "eligible": ["Yes"]}
    spec["quotas"] = [{"question": "role", "max": {ROLE: 1}}]
    spec["time_limit"] = {"max_minutes": 60}
    spec["attention"] = {"exclude_if_failed": 1, "return_if_failed": 1}  # one failed check: the outcome page
    return two_languages(spec)


def two_languages(spec: dict) -> dict:
    """``spec`` with every shown text as ``{"en": text, "de": ...}``; the German texts are markers ("Text
    auf Deutsch 3", with the English text's placeholders) so that no English of the file reaches a German
    page and any English found there is the platform's."""
    out = json.loads(json.dumps(spec))
    for number, path in enumerate(shown_paths(spec, SCHEMA)):
        parent = _get(out, path[:-1])
        english = parent[path[-1]]
        german = " ".join([f"Text auf Deutsch {number}", *re.findall(r"\{\w+\}", english)])
        parent[path[-1]] = {"en": english, "de": german}
    return out | {"languages": ["en", "de"]}


def english_patterns() -> dict[str, re.Pattern]:
    """The catalogue's English texts whose German differs, as patterns: a number placeholder matches a
    number, any other placeholder any text, a space any run of spaces."""
    found = {}
    for key, german in read_po(CATALOGUE / "django.po").items():
        english = key[0] if isinstance(key, tuple) else key
        if english == german or not english.strip():
            continue
        pattern = ""
        for literal, placeholder in re.findall(
            r"((?:(?!%\(\w+\)[sd]|%[sd]|\{\w+\}).)*)(%\(\w+\)[sd]|%[sd]|\{\w+\}|$)", english.strip(), re.S
        ):
            pattern += r"\s+".join(map(re.escape, re.split(r"\s+", literal)))
            pattern += r"\d+" if placeholder.endswith("d") else (".+?" if placeholder else "")
        found[english] = re.compile(r"(?<!\w)" + pattern + r"(?!\w)")
    return found


def page_text(page: str) -> str:
    """What a participant reads or hears: the text outside tags and the aria-label, alt, title and
    placeholder attributes, entities decoded, runs of spaces as one."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    attributes = re.findall(r'\b(?:aria-label|alt|title|placeholder)="([^"]*)"', page)
    text = re.sub(r"<[^>]+>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(" ".join([text, *attributes])))


class German:
    """German participants' test client: every page they were shown, by name, for the search."""

    def __init__(self, client, study):
        self.client, self.slug, self.pages = client, study.slug, {}

    def get(self, name: str, url: str, **data) -> str:
        return self.keep(name, self.client.get(url, data, follow=True))

    def post(self, name: str, url: str, data: dict) -> str:
        return self.keep(name, self.client.post(url, data, follow=True))

    def keep(self, name: str, response) -> str:
        page = response.content.decode()
        assert response.status_code in (200, 422), (name, response.status_code)
        assert '<html lang="de">' in page, name
        self.pages[name] = page
        return page

    def arrive(self, label: str) -> str:
        self.client.cookies.clear()
        return self.get(f"{label}: consent", f"/s/{self.slug}/", participant_label=label, lang="de")

    def consent(self, label: str) -> str:
        self.arrive(label)
        return self.post(f"{label}: after consent", f"/s/{self.slug}/consent/", {"decision": "accept"})

    def screening(self, label: str, answer: str) -> str:
        data = {"page_key": "screening", "choice": answer}
        return self.post(f"{label}: after screening", f"/s/{self.slug}/page/", data)

    def take_part(
        self, label: str, *, errors: bool = False, attention: str = "", role: str = ROLE
    ) -> tuple[Participant, set[str]]:
        """Participant ``label`` answers every page (the first page of each kind also sent empty with
        ``errors``; the attention check with ``attention`` when given; ``role`` in the questionnaire)
        until they finish; them and the page kinds they met."""
        participant = Participant.objects.get(external_id=label)
        kinds: set[str] = set()
        while participant.status == Participant.Status.ACTIVE:
            page = participant.plan[participant.position]
            self.get(f"{label}: {page['key']}", f"/s/{self.slug}/page/")
            if errors and page["kind"] not in kinds and page["kind"] != "instructions":
                self.post(f"{label}: {page['key']} with errors", f"/s/{self.slug}/page/", {"page_key": page["key"]})
            kinds.add(page["kind"])
            data = page_answers(participant.pk) | ({"role": role} if page["key"] == "about" else {})
            if attention and page["kind"] == "attention":
                data["choice"] = attention
            self.post(f"{label}: after {page['key']}", f"/s/{self.slug}/page/", data)
            participant.refresh_from_db()
        return participant, kinds


@pytest.fixture
def every_page_study(db, researcher):
    from studies.services import study_load

    return study_load(spec=every_page_spec(), owner=researcher).study


@pytest.mark.slow
def test_a_german_participant_meets_no_english_platform_text(client, every_page_study):
    slug = every_page_study.slug
    german = German(client, every_page_study)
    german.arrive("all")
    german.post("all: consent with error", f"/s/{slug}/consent/", {})
    german.post("all: screening", f"/s/{slug}/consent/", {"decision": "accept"})
    german.post("all: screening with error", f"/s/{slug}/page/", {"page_key": "screening"})
    german.screening("all", "Yes")
    german.get("all: withdraw", f"/s/{slug}/withdraw/")
    participant, kinds = german.take_part("all", errors=True)
    assert participant.status == Participant.Status.COMPLETED and participant.language == "de"
    assert PAGE_KINDS <= kinds, PAGE_KINDS - kinds
    assert "C0DE2" in german.get("all: done again", f"/s/{slug}/done/")

    german.consent("quota")  # the quota's group is full now
    german.screening("quota", "Yes")
    assert german.take_part("quota")[0].status == Participant.Status.SCREENED_OUT
    assert "Vielen Dank für Ihr Interesse" in german.pages["quota: after about"]
    german.consent("inattentive")
    german.screening("inattentive", "Yes")
    assert german.take_part("inattentive", attention="Red", role=OTHER_ROLE)[0].status == Participant.Status.COMPLETED
    assert "Aufmerksamkeitsfragen dieser Studie nicht bestanden" in german.pages["inattentive: after one"]
    german.consent("not-eligible")
    assert "Nach Ihrer Antwort ist diese Studie" in german.screening("not-eligible", "No")
    german.arrive("decline")
    german.post("decline: declined", f"/s/{slug}/consent/", {"decision": "decline"})
    german.consent("withdraw")
    german.post("withdraw: withdrawn", f"/s/{slug}/withdraw/", {"confirm": "withdraw"})
    german.consent("late")
    Participant.objects.filter(external_id="late").update(arrived_at=timezone.now() - timezone.timedelta(days=1))
    german.get("late: timed out", f"/s/{slug}/page/")
    german.client.cookies.clear()
    prolific = {"PROLIFIC_PID": "resume", "STUDY_ID": "s", "lang": "de"}
    german.get("resume: consent", f"/s/{slug}/", SESSION_ID="first", **prolific)
    german.post("resume: after consent", f"/s/{slug}/consent/", {"decision": "accept"})
    german.client.cookies.clear()  # another browser: the resume form, and its error (lang carried by the form)
    german.get("resume: resume", f"/s/{slug}/", SESSION_ID="second", **prolific)
    german.post("resume: resume with error", f"/s/{slug}/", {**prolific, "SESSION_ID": "second", "code": "WRONG"})

    patterns = english_patterns()
    texts = {name: page_text(page) for name, page in german.pages.items()}
    found = {
        name: sorted(english for english, pattern in patterns.items() if pattern.search(text))
        for name, text in texts.items()
    }
    assert not {name: texts for name, texts in found.items() if texts}, "English platform texts on German pages"
    for name, page in german.pages.items():  # the study's own texts are the German ones
        assert "Text auf Deutsch" in page or "resume" in name, name


def test_the_search_finds_an_english_platform_text():
    patterns = english_patterns()
    assert patterns["Next"].search(page_text("<button>Next</button>"))
    assert not patterns["Next"].search(page_text("<button>Weiter</button> Nextcloud"))
    page = '<p>Page <span>3</span> of 9</p><input aria-label="Type the sentence to continue.">'
    assert patterns["Page %(position)s of %(total)s"].search(page_text(page))
    assert patterns["Type the sentence to continue."].search(page_text(page))
    one_of = patterns["%(noun)s %(number)d of %(total)d"]  # a number placeholder matches numbers only
    assert one_of.search("Person 1 of 6") and not one_of.search("Possession of Cannabis")
