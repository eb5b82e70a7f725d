"""HTML of the participant's study pages, with blank forms rendered once per process.

A page's blank form looks the same for everyone who sees that page of that study version: only the
CSRF token, the progress line ("Page 5 of 44") and the page's key (its hidden ``page_key``) differ. The
template is therefore rendered once with random slot strings in their place, and each request fills the
slots in the cached HTML, which costs microseconds instead of the milliseconds of the template engine.
The key being a slot, pages that differ only in their key and place share one render: an adaptive
block's slot pages (``loan/#0``, ``loan/#1``, ...) are rendered once per item shown, not once per slot and
item. A form with errors (bound to the participant's own input) is always rendered afresh and never cached.
"""

import json
import secrets
from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.html import escape, format_html
from django.utils.translation import gettext

from core.caching import BoundedCache
from participation.page_load import PageLoad, measure_page_load
from participation.pages import ContentIndex, page_context, page_form
from participation.plan import ORDER_FIELDS
from participation.signals import records_signals
from tasks.page_index import Page

_SLOT = "slot" + secrets.token_hex(8)  # unguessable, so no study text can collide with it
_CSRF, _POSITION, _TOTAL, _PROGRESS, _RESUME, _KEY = (
    f"{_SLOT}{name}" for name in ("csrf", "position", "total", "progress", "resume", "key")
)
_cache: BoundedCache[str] = BoundedCache(size=4096)
_loads: BoundedCache[PageLoad] = BoundedCache(size=4096)
# Fields of a plan's page that record only where it fell in the participant's order (format 1's and
# format 2's "position"): pages differing only in these render alike.
PAGE_ORDER_FIELDS = (*ORDER_FIELDS, "position")


def resume_html(code: str) -> str:
    """The line with the participant's resume code (escaped), or nothing without a code."""
    if not code:
        return ""
    return format_html(
        '<p class="resume-code" id="resume-code">{} <strong>{}</strong></p>',
        gettext("To continue on another device, open your study link there and enter this code:"),
        code,
    )


def _context(page: Page, index: ContentIndex, form, position, total, progress, resume) -> tuple[str, dict]:
    ctx = page_context(page, index)
    template = ctx.pop("template")
    ctx.update(
        form=form, page=page, spec=index.spec, position=position, total=total, progress=progress, resume_html=resume
    )
    return template, ctx


def page_content_key(page: Mapping[str, Any]) -> str:
    """What a plan's page shows, without where it fell in the order: pages with equal keys render alike."""
    return json.dumps({name: value for name, value in page.items() if name not in PAGE_ORDER_FIELDS}, sort_keys=True)


def _blank_key(page: Page, index: ContentIndex, spec_hash: str) -> tuple[Page, tuple]:
    blank: Page = {**page, "key": _KEY}
    blank.pop("slot", None)
    return blank, (spec_hash, index.condition["key"], page_content_key(blank))


def _blank_page(page: Page, index: ContentIndex, spec_hash: str) -> str:
    """The page with an unbound form and slots for the per-request parts (its key among them), from the
    cache, where pages differing only in their key and place (an adaptive block's ``slot``) share one entry."""
    blank, key = _blank_key(page, index, spec_hash)
    html = _cache.get(key)
    if html is None:
        template, ctx = _context(blank, index, page_form(blank, index), _POSITION, _TOTAL, _PROGRESS, _RESUME)
        html = _cache.put(key, render_to_string(template, {**ctx, "csrf_token": _CSRF}))
    return html


def page_load(page: Page, index: ContentIndex, spec_hash: str) -> PageLoad:
    """The reading and answering load of the page as served (``participation.page_load``), measured once
    per process on its blank form."""
    key = _blank_key(page, index, spec_hash)[1]
    load = _loads.get(key)
    return load if load is not None else _loads.put(key, measure_page_load(_blank_page(page, index, spec_hash)))


def consent_response(request: HttpRequest, spec: dict, spec_hash: str, *, resume_code: str = "") -> HttpResponse:
    """The consent page of a study version, rendered once per process (every arrival asks for it), with
    the request's CSRF token and the participant's resume line put into its slots."""
    key = (spec_hash, "consent")
    html = _cache.get(key)
    if html is None:
        context = {"spec": spec, "resume_html": _RESUME, "csrf_token": _CSRF, "records_signals": records_signals(spec)}
        html = _cache.put(key, render_to_string("surveys/consent.html", context))
    return HttpResponse(html.replace(_CSRF, get_token(request)).replace(_RESUME, resume_html(resume_code)))


def study_page_response(
    request: HttpRequest,
    page: Page,
    index: ContentIndex,
    spec_hash: str,
    *,
    position: int,
    total: int,
    form=None,
    status: int = 200,
    resume_code: str = "",
) -> HttpResponse:
    """The page at 0-based ``position`` of ``total``; ``form`` given (with errors) renders afresh.
    ``resume_code`` (from the participant's session) is shown near the withdraw link."""
    progress = round(100 * position / total)
    if form is not None:
        template, ctx = _context(page, index, form, position + 1, total, progress, resume_html(resume_code))
        return render(request, template, ctx, status=status)
    html = (
        _blank_page(page, index, spec_hash)
        .replace(_KEY, escape(page["key"]))
        .replace(_CSRF, get_token(request))
        .replace(_POSITION, str(position + 1))
        .replace(_TOTAL, str(total))
        .replace(_PROGRESS, str(progress))
        .replace(_RESUME, resume_html(resume_code))
    )
    return HttpResponse(html, status=status)
