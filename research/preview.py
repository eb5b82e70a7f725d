"""Preview of a study version's pages for its researchers (owner, collaborators, or an account with
``studies.view_study``): every block of its (format 2) file, with one real item, rendered as participants
see it. A submitted preview form is validated and its errors shown, and nothing is stored."""

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from participation.pages import condition_index, page_context, page_form
from studies.content import study_content
from studies.models import Study
from studies.selectors import studies_visible_to
from tasks import block_task
from tasks.page_index import Page
from tasks.questions import page_key


@dataclass(frozen=True)
class PreviewPage:
    label: str
    condition: str
    page: Page


def preview_pages(spec: dict, spec_hash: str) -> list[PreviewPage]:
    """One page per block: its first item, or its one page for a ``one_page`` block, in the first condition
    that shows it (every stored version is format 2: a format 1 file is stored as its conversion)."""
    content = study_content(spec, spec_hash)
    pages = (
        [PreviewPage("screening", spec["conditions"][0]["key"], {"key": "screening", "kind": "screening"})]
        if (spec.get("screening"))
        else []
    )
    for block in spec["blocks"]:
        key, condition = block["key"], block["conditions"][0]
        if block["type"] != "task":
            pages.append(
                PreviewPage(
                    f"{key} ({block['type']})", condition, {"key": page_key(block), "kind": block["type"], "block": key}
                )
            )
            continue
        task = block_task(block)
        if task.one_page(block):  # as many items as a participant sees
            items = content.items(key)[: block["assignment"].get("per_participant")]
            pages.append(PreviewPage(f"{key} ({block['task']}, one page)", condition, task.block_page(block, items)))
            continue
        item = content.items(key)[0]
        page: Page = {"key": page_key(block, item), "kind": block["task"], "block": key, "item": item}
        for shown in task.item_pages(block, page):
            measure = f", {shown['measure']}" if "measure" in shown else ""
            pages.append(PreviewPage(f"{key} ({block['task']}{measure}; item {item})", condition, shown))
    return pages


def _previewable(user, slug: str, version: int) -> Study:
    """The version, when ``user`` may see the study (owner or collaborator of its first version) or holds
    the named permission ``studies.view_study`` (which already opens every study file in the admin;
    superusers have it); the bare ``is_staff`` flag is not enough. Http404 otherwise."""
    studies = Study.objects.all() if user.has_perm("studies.view_study") else studies_visible_to(user)
    study = studies.filter(slug=slug, version=version).first()
    if study is None:
        raise Http404("No such study version among yours.")
    return study


@login_required
def study_preview(request: HttpRequest, slug: str, version: int) -> HttpResponse:
    study = _previewable(request.user, slug, version)
    pages = preview_pages(study.spec, study.spec_hash)
    return render(request, "researcher/preview.html", {"study": study, "pages": pages})


@login_required
@require_http_methods(["GET", "POST"])
def study_preview_page(request: HttpRequest, slug: str, version: int, number: int) -> HttpResponse:
    study = _previewable(request.user, slug, version)
    pages = preview_pages(study.spec, study.spec_hash)
    if not 1 <= number <= len(pages):
        raise Http404("No such preview page.")
    shown = pages[number - 1]
    index = condition_index(study.spec, study.spec_hash, shown.condition)
    form = page_form(shown.page, index, data=request.POST if request.method == "POST" else None)
    checked = request.method == "POST" and form.is_valid()
    ctx = page_context(shown.page, index)
    template = ctx.pop("template")
    ctx.update(
        form=form,
        page=shown.page,
        spec=study.spec,
        position=number,
        total=len(pages),
        progress=round(100 * (number - 1) / len(pages)),
        preview=f"{study.title} v{study.version}, page {number} of {len(pages)}: {shown.label}",
        preview_checked=checked,
        preview_list=reverse("researcher:preview", args=[slug, version]),
    )
    return render(request, template, ctx, status=422 if request.method == "POST" and not checked else 200)
