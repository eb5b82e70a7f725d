"""The dashboard's preregistration page: the registration (when, which version, the plan, the bundle to
download) or the form that registers the study's plan as a background job (``runs.preregistration``)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from research.researcher_views import require_editor
from runs.models import Job, Preregistration
from runs.run_views import queue_from_form
from runs.serializers import PreregistrationRequestSerializer
from studies.format2 import questionnaire_questions
from studies.selectors import visible_versions


@login_required
@require_http_methods(["GET", "POST"])
def preregistration(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the study's registration or the plan form; POST: register the plan (a job), unless registered."""
    versions = visible_versions(request.user, slug)
    study = versions[0]
    registration = Preregistration.objects.filter(study__slug=slug).select_related("study", "registered_by").first()
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        require_editor(request.user, slug)
        serializer = PreregistrationRequestSerializer(data=request.POST, context={"study": study})
        if registration is not None:
            errors, status = (
                {"non_field_errors": ["This study is registered already: a registration is never replaced."]},
                409,
            )
        elif serializer.is_valid():
            job, errors, status = queue_from_form(
                kind=Job.Kind.PREREGISTRATION, user=request.user, study=study, params={"plan": serializer.plan()}
            )
            if job is not None:
                return redirect("researcher:job", job_id=job.pk)
        else:
            errors, status = {field: [str(m) for m in found] for field, found in serializer.errors.items()}, 400
    context = {
        "study": study,
        "registration": registration,
        "plan": registration.plan if registration else None,
        "questions": questionnaire_questions(study.spec),
        "errors": errors,
        "values": request.POST,
        "by": request.POST.getlist("by"),
        "target": study.spec.get("recruitment", {}).get("target"),
    }
    return render(request, "researcher/preregistration.html", context, status=status)


@login_required
def preregistration_bundle(request: HttpRequest, slug: str) -> FileResponse:
    """The registration's bundle (``bundle.zip``: study.json, the plans, requirements, the simulated run and
    the manifest of their sha256)."""
    visible_versions(request.user, slug)
    registration = Preregistration.objects.filter(study__slug=slug).first()
    if registration is None:
        raise Http404("This study is not registered.")
    try:
        handle = default_storage.open(f"{registration.files_prefix}/bundle.zip", "rb")
    except (FileNotFoundError, SuspiciousFileOperation) as exc:
        raise Http404("The registration's bundle is missing from the storage.") from exc
    return FileResponse(
        handle, as_attachment=True, filename=f"{slug}-preregistration.zip", content_type="application/zip"
    )
