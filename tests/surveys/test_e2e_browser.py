"""A participant takes the whole demo study in headless Chromium (Playwright), at phone width,
reloads in the middle, has an out-of-range risk score refused, finishes; then the export is
checked row by row against what was typed."""

import pytest

from participation.models import Participant
from research.export import export_tables

LABELS = ["Very similar", "Similar", "Somewhat similar", "Somewhat different", "Different", "Very different"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def page_key(page) -> str:
    return page.locator("input[name=page_key]").get_attribute("value")


def submit(page):
    with page.expect_navigation():
        page.get_by_role("button", name="Next").or_(page.get_by_role("button", name="Start")).click()


def test_participant_takes_the_whole_study(browser, live_server, demo_study):
    spec = demo_study.spec
    checks = {c["key"]: c for c in demo_study.format1_spec["attention_checks"]["items"]}
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/effort-demo/?PROLIFIC_PID=e2e-person&STUDY_ID=S&SESSION_ID=X")
    with page.expect_navigation():
        page.get_by_role("button", name="I agree to take part").click()

    typed: dict[str, object] = {}
    counter = 0
    reloaded = refused = keyboard_used = chart_seen = False
    while "/done/" not in page.url:
        key = page_key(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 391, f"horizontal scroll on {key}"
        if key == "instructions":
            submit(page)
            continue
        if key.startswith("pair/"):
            _, set_key, subject, measure = key.split("/")
            if not chart_seen:
                page.locator(".chart .main-svg").first.wait_for(timeout=15000)  # Plotly drew the chart
                chart_seen = True
            rating = 1 + counter % 6
            counter += 1
            radio = page.get_by_label(LABELS[rating - 1], exact=True)
            if not keyboard_used:
                radio.focus()
                page.keyboard.press("Space")
                keyboard_used = True
            else:
                radio.check()
            assert radio.is_checked()
            typed[(set_key, subject, measure)] = rating
            if measure == "overall":
                prediction = (17 * counter) % 101
                page.get_by_label("What percentage of other participants").fill(str(prediction))
                page.get_by_label("Trajectory / trend over the years").check()
                typed[(set_key, subject, "prediction")] = prediction
            if counter == 7 and not reloaded:
                page.reload()  # answers not yet sent are lost, but the page is the same one
                assert page_key(page) == key
                other = browser.new_context().new_page()  # another device: Prolific's link of the attempt
                other.goto(f"{live_server.url}/s/effort-demo/?PROLIFIC_PID=e2e-person&STUDY_ID=S&SESSION_ID=X")
                assert page_key(other) == key
                other.context.close()
                reloaded = True
                page.get_by_label(LABELS[rating - 1], exact=True).check()
                if measure == "overall":
                    page.get_by_label("What percentage of other participants").fill(
                        str(typed[(set_key, subject, "prediction")])
                    )
            submit(page)
        elif key.startswith("output/"):
            set_key = key.split("/")[1]
            page.get_by_label("Correct it with my own score").check()
            page.get_by_label("Your risk score for").fill("42.5")
            subjects = [
                n.split("_", 1)[1]
                for n in page.locator("input[name^=score_]").evaluate_all("els => els.map(e => e.name)")
            ]
            for i, subject in enumerate(subjects):
                score = 10 + 20 * i
                page.locator(f"input[name=score_{subject}]").fill(str(score))
                page.locator(f"textarea[name=rationale_{subject}]").fill(f"Rationale for {subject} in {set_key}")
                typed[(set_key, subject, "fair")] = score / 100
            if not refused:
                page.locator(f"input[name=score_{subjects[0]}]").fill("150")
                submit(page)
                assert page_key(page) == key
                assert page.get_by_text("A risk score cannot be above 100").is_visible()
                assert (
                    page.locator(f"textarea[name=rationale_{subjects[1]}]").input_value()
                    == f"Rationale for {subjects[1]} in {set_key}"
                )
                page.locator(f"input[name=score_{subjects[0]}]").fill("10")
                refused = True
            submit(page)
        elif key == "disagreement":  # the converted agree block's one page: item<i>-answer per prompt, in plan order
            names = page.locator("input[name$=-answer]").evaluate_all("els => [...new Set(els.map(e => e.name))]")
            for i, name in enumerate(names):
                page.locator(f"input[name={name}][value='{i % 2}']").check()
                typed[("agree", i)] = i % 2
            submit(page)
        elif key.startswith("attention/"):
            page.get_by_label(checks[key.split("/")[1]]["correct"], exact=True).check()
            submit(page)
        else:
            raise AssertionError(f"unexpected page {key}")

    assert page.locator("#completion-code").inner_text() == spec["completion"]["code"]
    assert page.locator("#completion-link").get_attribute("href") == spec["completion"]["url"]
    assert reloaded and refused and keyboard_used and chart_seen
    context.close()

    participant = Participant.objects.get(external_id="e2e-person")
    assert participant.status == "completed"
    tables = export_tables("effort-demo")
    rows = tables.pairs[tables.pairs["participant_id"] == str(participant.pseudonym)]
    assert len(rows) == 12
    for row in rows.itertuples():
        assert row.d_traj == typed[(row.set, row.comparison, "trajectory")]
        assert row.d_aggr == typed[(row.set, row.comparison, "aggregate")]
        assert row.d_overall == typed[(row.set, row.comparison, "overall")]
        assert row.prediction_similar == typed[(row.set, row.comparison, "prediction")]
        assert row.factor_trajectory == 1 and row.factor_aggregate == 0
        assert row.k_accepted == 0 and row.k_score == pytest.approx(0.425)
        assert row.fair_score == pytest.approx(typed[(row.set, row.comparison, "fair")])
        assert row.output_distance == pytest.approx(abs(0.425 - row.fair_score))
        assert row.rationale == f"Rationale for {row.comparison} in {row.set}"
        assert row.excluded == 0
    disagreements = tables.disagreements[tables.disagreements["participant_id"] == str(participant.pseudonym)]
    assert len(disagreements) == 8
    condition = next(c for c in demo_study.format1_spec["conditions"] if c["key"] == participant.condition.key)
    prompt_of: dict[str, str] = {}
    for prompt in condition["disagreement_prompts"]:  # a subject of two prompts keeps the first's key
        prompt_of.setdefault(prompt["subject"], prompt["key"])
    shown = next(p for p in participant.plan if p["key"] == "disagreement")["items"]
    agreed = {prompt_of[subject]: typed[("agree", i)] for i, subject in enumerate(shown)}
    for row in disagreements.itertuples():
        assert row.agree == agreed[row.prompt]
    people = tables.participants.set_index("participant_id")
    assert people.loc[str(participant.pseudonym), "attention_failed"] == 0
