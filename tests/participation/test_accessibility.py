"""Every participant page kind passes axe-core (WCAG 2.1 A and AA rules) without a serious or critical
violation at 390 and 1280 px in Chromium: consent (and its error), instructions, questionnaire, every
registered task type (through the researcher preview, which renders the participant template), attention,
screening, the time-out, completion, decline, withdrawal, resume, study-full and error pages. A page variant
(kind, measure, one page or not, detection check) is audited once per study: the effort demo's 18 pair pages
are three variants. A page kind is audited at both widths the first time, its further variants (the same
template and style sheet, other fields) at 390 px. axe-core comes from the npm registry (``package.json``;
``make test`` installs it into ``node_modules``)."""

import json
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from participation.models import Participant
from research.preview import preview_pages
from studies.format2 import BLOCK_TYPES
from tasks import BLOCK_TASKS
from tasks.detection import CHECKS
from tests.conftest import ROOT, required
from tests.participation.format2_helpers import example_spec
from tests.tasks.test_agree_one_page import one_page_spec
from tests.tasks.test_choose import choice_spec
from tests.tasks.test_feature_fairness import feature_spec
from tests.tasks.test_rank import rank_spec
from tests.tasks.test_tradeoff import tradeoff_spec
from tests.tasks.test_triplet import triplet_spec

# Every format 2 page kind: each task type of a task block and each page block type (instructions, ...).
PAGE_KINDS = set(BLOCK_TASKS) | set(BLOCK_TYPES) - {"task"}
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (390, 1280)
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


@pytest.fixture
def axe() -> Path:
    if not AXE.exists():
        if required("REQUIRE_BROWSER"):
            pytest.fail(f"CI requires axe-core at {AXE} (make test installs it with npm ci)")
        pytest.skip("axe-core is not installed (npm ci)")
    return AXE


# axe-core processes only the violations (``resultTypes``: passes and the rest keep one node each, no selectors
# built for them) and the page returns only the serious and critical ones: the same findings, less work.
SERIOUS = """rules => axe.run(document, {runOnly: {type: "tag", values: rules}, resultTypes: ["violations"]})
  .then(result => result.violations.filter(v => v.impact === "serious" || v.impact === "critical")
  .map(v => ({id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map(node => node.target.join(" "))})))"""


def serious_violations(page, axe_path: Path, widths: tuple[int, ...] = WIDTHS) -> list[str]:
    """axe-core's serious and critical violations on the page at each of ``widths``, one line per rule and width
    (rule id, impact, the first offending elements)."""
    found = []
    for width in widths:
        page.set_viewport_size({"width": width, "height": 900})
        if not page.evaluate("typeof axe !== 'undefined'"):
            page.add_script_tag(path=str(axe_path))
        for violation in page.evaluate(SERIOUS, RULES):
            found.append(f"{width}px {violation['id']} ({violation['impact']}): {violation['targets']}")
    return found


def _audit(page, axe_path: Path, name: str, problems: dict, widths: tuple[int, ...] = WIDTHS) -> None:
    page.wait_for_load_state("load")
    if found := serious_violations(page, axe_path, widths):
        problems[name] = found


def _widths(kind: tuple, audited: set) -> tuple[int, ...]:
    """Both widths the first time a page kind (with or without its errors) is audited; afterwards (another
    variant of the kind: the same template and style sheet, other fields) the phone's width only."""
    if kind in audited:
        return WIDTHS[:1]
    audited.add(kind)
    return WIDTHS


UNLINKED = """() => [...document.querySelectorAll("main [aria-invalid=true], main fieldset.has-error")].filter(el => {
  const holder = el.closest("fieldset.has-error") || el;  // a radio or checkbox: its group names the error
  return !(holder.getAttribute("aria-describedby") || "").split(" ").some(id => {
    const error = document.getElementById(id); return error && error.innerText.trim(); });
}).map(el => el.outerHTML.slice(0, 120))"""


def _errors_linked(page) -> bool:
    """Every field marked invalid (and every fieldset with an error) names its error message in
    aria-describedby (a radio or checkbox through its fieldset), so a screen reader reads the message with
    the field."""
    unlinked = page.evaluate(UNLINKED)
    assert not unlinked, unlinked
    return page.locator("main [aria-invalid=true], main fieldset.has-error").count() > 0


def _login(context, live_server) -> None:
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-pass-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.close()


def _studies(researcher) -> list:
    """The format 2 example (every block type but choose, triplet and feature_fairness), a study of each of
    these three, an agree block on one page (``one_page``), the effort demo (format 1), and a screening
    question on the example, loaded for ``researcher``."""
    from studies.services import study_load
    from studies.study_file import validate_study

    example = example_spec()
    example["screening"] = {
        "question": "Do you live in the United States?",
        "options": ["Yes", "No"],
        "eligible": ["Yes"],
    }
    example["time_limit"] = {"max_minutes": 30}
    example["blocks"][-1:-1] = [  # a detection item of each check (tasks.detection)
        {"key": f"detect_{check}", "type": "detection", "check": check} for check in CHECKS
    ]
    effort = json.loads((ROOT / "studies" / "bundled" / "effort_demo.json").read_text())
    specs = (
        example,
        choice_spec(),
        triplet_spec(),
        feature_spec(),
        one_page_spec(),
        rank_spec(),
        tradeoff_spec(),
        effort,
    )
    return [study_load(spec=validate_study(spec), owner=researcher).study for spec in specs]


def test_every_participant_page_kind_has_no_serious_axe_violation(browser, live_server, researcher, axe):  # noqa: F811
    studies = _studies(researcher)
    context = browser.new_context(bypass_csp=True)  # axe is injected as a script; the pages' CSP stays as served
    _login(context, live_server)
    page = context.new_page()
    problems: dict[str, list[str]] = {}
    audited_tasks = set()
    errors_seen: set[tuple[str, bool]] = set()  # (page kind, one page of a block's items)
    at_both_widths: set[tuple] = set()  # the page kinds audited at both widths (``_widths``)
    for study in studies:
        variants = set()
        for number, shown in enumerate(preview_pages(study.spec, study.spec_hash), start=1):
            if (variant := _variant(study.spec, shown.page)) in variants:
                continue
            variants.add(variant)
            page.goto(f"{live_server.url}/researcher/studies/{study.slug}/v{study.version}/preview/{number}/")
            widths = _widths((shown.page["kind"], "items" in shown.page), at_both_widths)
            _audit(page, axe, f"{study.slug}: {shown.label}", problems, widths)
            audited_tasks.add(shown.page["kind"])
        # The questionnaire and the first task page of each kind (and one-page kind) submitted empty: their
        # error messages, linked to their fields.
        for number, shown in enumerate(preview_pages(study.spec, study.spec_hash), start=1):
            seen = (shown.page["kind"], "items" in shown.page)
            if seen[0] in PAGE_KINDS - {"instructions", "attention"} and seen not in errors_seen:
                errors_seen.add(seen)
                page.goto(f"{live_server.url}/researcher/studies/{study.slug}/v{study.version}/preview/{number}/")
                with page.expect_navigation():
                    page.locator("main form").last.evaluate("form => form.submit()")
                assert page.locator(".error, [role=alert]").count(), shown.label
                assert _errors_linked(page), f"{shown.label}: an error is not linked to its field"
                _audit(page, axe, f"{study.slug}: {shown.label} with errors", problems)
    page.set_content('<html lang="en"><body><main><img src="x.png"><p style="color:#bbb">grey</p></main></body></html>')
    assert {line.split()[1] for line in serious_violations(page, axe)} >= {"image-alt", "color-contrast"}  # axe sees
    assert PAGE_KINDS <= audited_tasks, f"task types never audited: {PAGE_KINDS - audited_tasks}"
    assert ("agree", True) in errors_seen, "the one-page agree form was not audited with its errors"

    example = studies[0]
    _participant_pages(browser, live_server, example, axe, problems)
    assert not problems, "\n".join(f"{name}: {found}" for name, found in problems.items())


def _variant(spec: dict, shown: dict) -> tuple:
    """What sets a preview page's markup apart from the study's other pages: its kind, its measure (a pair's
    three ratings), whether it holds a block's items on one page, and a detection block's check."""
    block = next((b for b in spec["blocks"] if b["key"] == shown.get("block")), {})
    return shown["kind"], shown.get("measure"), "items" in shown, block.get("check")


def _arrive(page, live_server, study, label: str, session: str = "first"):
    """``page`` as a new visitor's (no cookie: another participant, or the same one in another browser) at the
    study's link."""
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={label}&STUDY_ID=s&SESSION_ID={session}")
    return page


def _participant_pages(browser, live_server, study, axe_path: Path, problems: dict) -> None:  # noqa: F811
    """Consent (and its error), the screening page, the first study page, withdrawal, decline, time-out,
    completion, resume, study full and a study that does not exist, as participants reach them."""
    visitor = browser.new_context(bypass_csp=True).new_page()
    page = _arrive(visitor, live_server, study, "a11y-one")
    _audit(page, axe_path, "consent", problems)
    with page.expect_navigation():
        page.locator("form").first.evaluate("form => form.submit()")  # no decision: the consent's error
    _audit(page, axe_path, "consent with error", problems)
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    _audit(page, axe_path, "screening", problems)
    page.get_by_role("link", name="Withdraw from the study").click()
    _audit(page, axe_path, "withdraw", problems)
    with page.expect_navigation():
        page.get_by_role("button", name="Withdraw").first.click()
    _audit(page, axe_path, "withdrawn", problems)

    page = _arrive(visitor, live_server, study, "a11y-two")
    with page.expect_navigation():
        page.get_by_role("button", name="I do not agree").click()
    _audit(page, axe_path, "declined", problems)

    page = _arrive(visitor, live_server, study, "a11y-three")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    Participant.objects.filter(external_id="a11y-three").update(arrived_at=timezone.now() - timezone.timedelta(days=1))
    page.reload()
    assert "The time for this study is over" in page.content()
    _audit(page, axe_path, "timed out", problems)

    page = _arrive(visitor, live_server, study, "a11y-five")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    Participant.objects.filter(external_id="a11y-five").update(status=Participant.Status.COMPLETED)
    page.reload()
    _audit(page, axe_path, "done", problems)

    page = _arrive(visitor, live_server, study, "a11y-four")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()
    page = _arrive(visitor, live_server, study, "a11y-four", "second")  # the same Prolific id in another browser
    assert "Continue the study in this browser" in page.content()
    _audit(page, axe_path, "resume", problems)
    page.get_by_label("Resume code").fill("WRONG")
    with page.expect_navigation():
        page.get_by_role("button", name="Continue").click()
    assert page.get_by_role("alert").count()
    _audit(page, axe_path, "resume with error", problems)

    page.context.clear_cookies()
    page.goto(f"{live_server.url}/s/no-such-study/page/")
    _audit(page, axe_path, "study not found", problems)
    full = f"{live_server.url}/s/{study.slug}/full-check/"  # the page a full study answers, served as is
    page.route(full, lambda route: route.fulfill(body=render_to_string("surveys/full.html", {"spec": study.spec})))
    page.goto(full)
    _audit(page, axe_path, "study full", problems)
