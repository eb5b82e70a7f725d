"""CPU seconds of a browser test's fixed cost: Playwright's driver and headless Chromium started, one page, stopped
(what a browser per test pays), against a new context and page in a running browser (what a browser per test
process pays). CPU of this process and the children it waited for (the driver and Chromium, counted when they
exit), with the suite's Chromium flags (tests/shared_chromium.py).

Run: .venv/bin/python bench/browser_launch.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")  # the flags' module imports models
django.setup()

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

from tests.shared_chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

PAGE = "<html lang='en'><body><main><h1>A page</h1><p>Some text.</p></main></body></html>"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _one_page(browser: Browser) -> None:
    context = browser.new_context()
    context.new_page().set_content(PAGE)
    context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="how many browsers (and contexts) to measure")
    args = parser.parse_args()
    start = _cpu()
    for _ in range(args.repeat):
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            _one_page(browser)
            browser.close()
    per_browser = (_cpu() - start) / args.repeat
    start = _cpu()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.repeat):
            _one_page(browser)
        browser.close()
    shared = (_cpu() - start) / args.repeat
    print(f"a browser per page: {per_browser:.2f} CPU s each; one browser, a context per page: {shared:.2f} CPU s each")
    print(f"saved per browser test with one Chromium per test process: {per_browser - shared:.2f} CPU s")


if __name__ == "__main__":
    main()
