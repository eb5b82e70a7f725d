"""/api/docs/: Swagger UI served from this server's static files (drf-spectacular-sidecar), working
under the CSP (script-src 'self') with no request leaving the server. Set ``REPORT_SCREENSHOTS=DIR``
to keep desktop and 390 px screenshots."""

import os
import re
from pathlib import Path

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


def test_docs_page_loads_only_local_files_and_no_inline_script(researcher):
    assert Client().get("/api/docs/")["Location"] == "/accounts/login/?next=/api/docs/"
    client = Client()
    client.force_login(researcher)
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    sources = [re.search(r'src="([^"]+)"', attrs).group(1) for attrs, _ in scripts]
    assert sources == [
        "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
        "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-standalone-preset.js",
        "/api/docs/?script=",
    ]
    assert all(body.strip() == "" for _, body in scripts)  # no inline script
    assert "http://" not in html and "https://" not in html
    script_src = re.search(r"script-src ([^;]*)", page["Content-Security-Policy"]).group(1)
    assert script_src == "'self'"
    init = client.get("/api/docs/?script=")
    assert init.status_code == 200 and init["Content-Type"].startswith("application/javascript")
    assert '"validatorUrl": null' in init.content.decode()  # no call to validator.swagger.io
    assert "/api/schema/" in init.content.decode()
    for src in sources[:2]:
        assert client.get(src).status_code == 200


def local_only(server: str, requested: list[str]):
    """A Playwright route handler: records every URL, lets this server's through, aborts the rest."""

    def route(r, request):
        requested.append(request.url)
        if request.url.startswith(server + "/"):
            r.continue_()
        else:
            r.abort()

    return route


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_docs_render_every_operation_without_network_or_csp_errors(browser, live_server, demo_study):  # noqa: F811
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = sum(len(ops) for ops in schema["paths"].values())
    shots = os.environ.get("REPORT_SCREENSHOTS")
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        messages: list[str] = []
        requested: list[str] = []
        page.on("console", lambda m, messages=messages: messages.append(m.text))
        page.on("pageerror", lambda e, messages=messages: messages.append(str(e)))
        page.route("**/*", local_only(live_server.url, requested))
        page.goto(f"{live_server.url}/accounts/login/?next=/api/docs/")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-pass-123")
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        page.locator(".opblock").nth(operations - 1).wait_for(timeout=20000)
        assert page.locator(".opblock").count() == operations
        assert page.get_by_text("Human-calibrated fairness API").first.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"api-docs-top-{width}.png"))
        # Try one operation with the session: the studies list, paged.
        studies = page.locator("#operations-studies-studies_list")
        studies.locator(".opblock-summary").click()
        studies.get_by_role("button", name="Try it out").click()
        studies.get_by_role("button", name="Execute").click()
        live = studies.locator(".live-responses-table tbody .response-col_status").first
        live.wait_for(timeout=20000)
        assert live.inner_text().strip().startswith("200")
        assert '"slug": "effort-demo"' in studies.locator(".live-responses-table .microlight").first.inner_text()
        assert [u for u in requested if not u.startswith(live_server.url + "/")] == []
        assert any("/api/schema/" in u for u in requested) and any("/api/studies/" in u for u in requested)
        violations = [m for m in messages if "Content Security Policy" in m or "Refused to" in m]
        assert violations == [], violations
        assert not [m for m in messages if "rror" in m], messages
        if shots:
            page.screenshot(path=str(Path(shots) / f"api-docs-tried-{width}.png"))
        context.close()
