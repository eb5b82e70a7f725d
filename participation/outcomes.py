"""How a participant's study ends, the completion code and link they get, and what the researcher
should do with their Prolific submission.

Outcomes (the study file's ``prolific.completion_codes`` has one optional code per outcome):

* ``completed``: every page answered with fewer than ``attention.return_if_failed`` failed
  attention checks; the code is ``prolific.completion_codes.completed`` or, as before,
  ``completion.code`` (with ``completion.url``).
* ``failed_attention``: every page answered but at least ``return_if_failed`` attention checks failed
  (default 2, Prolific's attention-check policy: in studies of 5 minutes or more a participant must
  fail at least two fair checks before their submission may be returned or rejected). They are shown
  ``prolific.failed_attention_message`` (default: Prolific's request to return the submission).
* ``screened_out``: their answer to the study file's ``screening`` question is not eligible; they
  are shown ``prolific.screened_out_message``. Screened out by a quota, they are shown the quota's
  ``message`` (``studies.quotas.quota_message``) instead.
* ``declined``: they did not consent; they are shown ``consent.decline_message``.

Timed-out participants get no code: Prolific times their submission out itself.

A code's link is Prolific's ``https://app.prolific.com/submissions/complete?cc=CODE``. An outcome
without a code shows its message and no code, so the submission cannot be sent as complete.

Only a participant who came from Prolific (their link carried Prolific's ``STUDY_ID`` or ``SESSION_ID``)
is sent back to Prolific: anyone else (a ``participant_label`` link, a pilot) gets a plain end page,
with no Prolific link, code or wording; a completed one keeps the completion code, and a study's own
``completion.url`` that is not Prolific's stays their link onwards.
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.utils.translation import gettext, gettext_noop

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
COMPLETED, FAILED_ATTENTION, SCREENED_OUT, DECLINED = "completed", "failed_attention", "screened_out", "declined"
DEFAULT_RETURN_IF_FAILED = 2
DEFAULT_FAILED_ATTENTION_MESSAGE = gettext_noop(
    "Unfortunately you did not pass the attention checks in this study. In line with Prolific's attention "
    "check policy, please return your submission on Prolific."
)
DEFAULT_SCREENED_OUT_MESSAGE = gettext_noop(
    "Your answer shows that this study is not for you, so it ends here. Please return your submission on Prolific."
)
# the same outcomes said to a participant who did not come from Prolific
PLAIN_FAILED_ATTENTION_MESSAGE = gettext_noop(
    "Unfortunately you did not pass the attention checks in this study, so your answers cannot be used."
)
PLAIN_SCREENED_OUT_MESSAGE = gettext_noop("Your answer shows that this study is not for you, so it ends here.")


@dataclass(frozen=True)
class Completion:
    """What the participant's last page shows for an outcome ('' where there is nothing to show);
    ``prolific``: the link goes back to Prolific (the page says so)."""

    outcome: str
    code: str
    url: str
    message: str
    prolific: bool = False


def attention_rules(spec: dict) -> dict:
    """The attention-check thresholds, ``attention`` of a stored (format 2) file: a format 1 file is stored as
    its conversion, which moves ``attention_checks``' thresholds there (``studies.format1``)."""
    return spec.get("attention", {})


def return_if_failed(spec: dict) -> int:
    """Failed attention checks that make the outcome ``failed_attention`` (default 2)."""
    return attention_rules(spec).get("return_if_failed", DEFAULT_RETURN_IF_FAILED)


def outcome_of(spec: dict, status: str, attention_failed: int) -> str:
    """The outcome of a participant who finished (status ``completed`` or ``screened_out``)."""
    if status == SCREENED_OUT:
        return SCREENED_OUT
    return FAILED_ATTENTION if attention_failed >= return_if_failed(spec) else COMPLETED


def completion_for(spec: dict, outcome: str, *, from_prolific: bool = True) -> Completion:
    """The code, link and message shown for ``outcome`` (the study file's message, else the default in the
    active language); ``from_prolific`` False: the plain end page (see the module's docstring)."""
    prolific = spec.get("prolific", {})
    code = prolific.get("completion_codes", {}).get(outcome, "")
    url = PROLIFIC_COMPLETE_URL.format(code=code) if code else ""
    if outcome == COMPLETED:
        if not code:  # the single code of the study file's ``completion``, with its own link
            code, url = spec["completion"]["code"], spec["completion"].get("url", "")
        message = ""
    elif outcome == DECLINED:
        message = spec["consent"]["decline_message"]
    else:
        defaults = {
            (FAILED_ATTENTION, True): DEFAULT_FAILED_ATTENTION_MESSAGE,
            (FAILED_ATTENTION, False): PLAIN_FAILED_ATTENTION_MESSAGE,
            (SCREENED_OUT, True): DEFAULT_SCREENED_OUT_MESSAGE,
            (SCREENED_OUT, False): PLAIN_SCREENED_OUT_MESSAGE,
        }
        message = prolific.get(f"{outcome}_message") or gettext(defaults[outcome, from_prolific])
    to_prolific = _is_prolific(url)
    if from_prolific:
        return Completion(outcome, code, url, message, prolific=to_prolific)
    # not from Prolific: no way back there; only a completed participant keeps the code
    return Completion(outcome, code if outcome == COMPLETED else "", "" if to_prolific else url, message)


def _is_prolific(url: str) -> bool:
    """Whether a link leads to Prolific (``app.prolific.com``, or its older ``prolific.co`` domain)."""
    host = urlsplit(url).hostname or ""
    return any(host == domain or host.endswith(f".{domain}") for domain in ("prolific.com", "prolific.co"))


@dataclass(frozen=True)
class Review:
    """The recommended decision on a Prolific submission and why."""

    action: str  # approve, return or reject
    reason: str


def review(spec: dict, status: str, attention_failed: int, attention_answered: int) -> Review | None:
    """What to do with a submission on Prolific; None while the participant is still taking part
    (arrived or active within the time limit) or withdrew (their Prolific ids are deleted).

    Failed attention checks: reject (Prolific's policy allows it once a participant failed
    ``return_if_failed`` fair checks; they were asked to return the submission themselves first).
    Timed out, screened out and declined consent: return (they are not paid for a completed study).
    """
    if status == "completed":
        if outcome_of(spec, status, attention_failed) == FAILED_ATTENTION:
            return Review("reject", f"failed attention checks {attention_failed} of {attention_answered}")
        return Review("approve", "completed")
    reasons = {"timed_out": "timed out", "screened_out": "screened out", "declined": "declined consent"}
    return Review("return", reasons[status]) if status in reasons else None
