"""The researcher's pages: study list, dashboard, its collaborators and export downloads (login
required; a researcher sees only the studies they own or that are shared with them; a viewer changes
nothing, only the owner changes collaborators)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied

from participation.pilot import pilot_token
from participation.recruitment import recruitment_target
from participation.services import pilot_participants_delete
from research.dashboard import StudyCounts
from research.downloads import DOWNLOAD_TYPES, table_download
from research.participant_samples import DEFAULT_SAMPLE, SAMPLES
from research.tables import study_tables
from studies.collaborators import (
    ROLE_MEANINGS,
    ROLES,
    CollaboratorError,
    collaborator_add,
    collaborator_history,
    collaborator_remove,
    collaborator_set_role,
    collaborators_of,
    is_owner,
)
from studies.lifecycle import BUTTONS, MEANINGS, STATUSES, status_history, study_set_status
from studies.selectors import can_view, latest_versions, may_edit, visible_versions


@login_required
def study_list(request: HttpRequest) -> HttpResponse:
    return render(request, "researcher/study_list.html", {"studies": latest_versions(request.user)})


def sample_of(request: HttpRequest) -> str:
    """The ``participants`` filter of the query string (study, all, real, simulated, pilot); 404 if
    unknown. ``include_pilot=1`` without a filter, as the API takes it, means "all"."""
    default = "all" if request.GET.get("include_pilot") == "1" else DEFAULT_SAMPLE
    sample = request.GET.get("participants", default)
    if sample not in SAMPLES:
        raise Http404(f"Unknown participants filter; choose one of {', '.join(SAMPLES)}.")
    return sample


def may_manage(user, study) -> bool:
    """Removing participants and acting on Prolific are for the study's owner (``studies.collaborators.is_owner``:
    its first version's owner, and superusers), not collaborators."""
    return is_owner(user, study.slug)


def pilot_context(request: HttpRequest, versions, counts: StudyCounts) -> dict:
    """The dashboard's pilot section (``counts``: the study's, ``research.dashboard.study_counts``)."""
    slug = versions[0].slug
    return {
        "pilot_url": request.build_absolute_uri(reverse("surveys:start", args=[slug])) + f"?pilot={pilot_token(slug)}",
        "pilot_count": counts.pilots,
        "may_delete_pilot": is_owner(request.user, slug),
    }


def collaborators_context(request: HttpRequest, slug: str) -> dict:
    """The dashboard's collaborators section: who the study is shared with and in which role, the log of
    changes, whether this researcher may change them (the owner) and may edit the study."""
    return {
        "collaborators": {
            "members": collaborators_of(slug),
            "history": collaborator_history(slug),
            "may_manage": is_owner(request.user, slug),
            "roles": [(role, ROLE_MEANINGS[role]) for role in ROLES],
        },
        "may_edit": may_edit(request.user, slug),
    }


def require_editor(user, slug: str) -> None:
    """PermissionDenied (403) unless ``user`` may change the study (owner, editor, superuser)."""
    if not may_edit(user, slug):
        raise PermissionDenied("You can see this study but not change it: ask its owner to make you an editor.")


@login_required
@require_POST
def collaborators_change(request: HttpRequest, slug: str) -> HttpResponse:
    """The owner adds a collaborator (``name``: username or e-mail, ``role``), changes one's ``role`` or
    removes one (``user``): ``action`` add, role or remove; each change logged. Others: 403."""
    visible_versions(request.user, slug)
    if not is_owner(request.user, slug):
        raise PermissionDenied("Only the study's owner may change its collaborators.")
    action, role = request.POST.get("action", ""), request.POST.get("role", "")
    try:
        user_id = int(request.POST.get("user", "0") or 0)
        if action == "add":
            added = collaborator_add(slug=slug, by=request.user, name=request.POST.get("name", ""), role=role)
            messages.success(request, f"{added.user.get_username()} added as {role}.")
        elif action == "role":
            if collaborator_set_role(slug=slug, by=request.user, user_id=user_id, role=role):
                messages.success(request, f"Role changed to {role}.")
        elif action == "remove":
            messages.success(request, f"{collaborator_remove(slug=slug, by=request.user, user_id=user_id)} removed.")
        else:
            raise CollaboratorError("unknown change; choose add, role or remove")
    except (CollaboratorError, ValueError) as exc:
        messages.error(request, f"Nothing changed: {exc}.")
    return redirect(reverse("researcher:dashboard", args=[slug]) + "#collaborators")


def lifecycle_context(versions, counts: StudyCounts) -> dict:
    """The dashboard's status section: the state, what it means, the buttons to the other states, the
    recruitment target's progress, who may still finish (``counts``: the study's,
    ``research.dashboard.study_counts``), and the latest changes."""
    study = versions[0]
    return {
        "lifecycle": {
            "status": study.status,
            "meaning": MEANINGS[study.status],
            "choices": [(state, label) for state, label in BUTTONS.items() if state != study.status],
            "target": recruitment_target(study.spec),
            "completed": counts.completed,
            "in_progress": counts.in_progress,
            "history": status_history(study.slug),
        }
    }


@login_required
@require_POST
def study_status_change(request: HttpRequest, slug: str) -> HttpResponse:
    """Put the study in the posted state (its owner and editors; the change is logged)."""
    visible_versions(request.user, slug)
    require_editor(request.user, slug)
    status = request.POST.get("status", "")
    if status not in STATUSES:
        messages.error(request, f"Unknown state {status[:20]!r}; choose one of {', '.join(STATUSES)}.")
    elif study_set_status(slug=slug, status=status, by=request.user, reason="dashboard"):
        messages.success(request, f"The study is now {status}.")
    return redirect("researcher:dashboard", slug=slug)


@login_required
@require_POST
def pilot_delete(request: HttpRequest, slug: str) -> HttpResponse:
    """Delete the study's pilot participants (owner only)."""
    visible_versions(request.user, slug)
    if not is_owner(request.user, slug):
        raise Http404("Only the study's owner can delete its pilot participants.")
    deleted = pilot_participants_delete(slug=slug)
    messages.success(request, f"{deleted} pilot participant(s) deleted with their answers.")
    return redirect("researcher:dashboard", slug=slug)


@login_required
@require_POST
def prolific_action(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a Prolific action from the dashboard's Prolific panel (owner only; the job worker calls Prolific)."""
    from research.api.prolific import prolific_action_queue  # it imports may_manage from this module

    try:
        action, errors = prolific_action_queue(request.user, slug, request.POST)
    except ApiPermissionDenied:
        raise Http404("Only the study's owner can act on Prolific.") from None
    if errors:
        problems = "; ".join(f"{field}: {' '.join(map(str, why))}" for field, why in errors.items())
        messages.error(request, f"Prolific {action or 'action'} not started: {problems}")
    else:
        messages.success(request, f"Prolific {action.replace('_', ' ')} queued: reload in a moment for its result.")
    return redirect(reverse("researcher:dashboard", args=[slug]) + "#prolific")


@login_required
def submissions_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The Prolific submissions to approve, return or reject (CSV, raw Prolific ids)."""
    from research.export import table_to_csv  # the export stack (pandas) only when a file is asked for
    from research.submissions import submissions_table

    if not can_view(request.user, slug):
        raise Http404("No such study among yours.")
    table = submissions_table(slug, include_pilot=request.GET.get("include_pilot") == "1")
    response = HttpResponse(table_to_csv(table), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-submissions.csv"'
    return response


CODEBOOK_TYPES = {"csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8"}


@login_required
def codebook_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """The study's codebook (every column of every export table) as CSV or Markdown, the files
    ``manage.py export_codebook`` writes; for those who may see the study."""
    if fmt not in CODEBOOK_TYPES or not can_view(request.user, slug):
        raise Http404("No such codebook.")
    from research.codebook import codebook_markdown, codebook_of  # pandas only when the file is asked for
    from research.export import table_to_csv

    codebook = codebook_of(slug)
    body = table_to_csv(codebook) if fmt == "csv" else codebook_markdown(slug, codebook)
    response = HttpResponse(body, content_type=CODEBOOK_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{slug}-codebook.{fmt}"'
    return response


@login_required
def export_download(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponseBase:
    """One export table as CSV (the answers table streamed), JSON, Parquet, SPSS or Stata."""
    if fmt not in DOWNLOAD_TYPES or not can_view(request.user, slug) or table not in study_tables(slug):
        raise Http404("No such export.")
    return table_download(slug, table, sample_of(request), fmt)
