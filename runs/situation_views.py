"""Situation testing from the dashboard: the form that uploads the data (CSV or Parquet), names the protected
attribute, the decision, the features, the k values, the method options and the engine, and queues the same
background job as the API (``runs.serializers.SituationTestingRequestSerializer`` checks the options); the job
page shows its progress and its report."""

import re
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_http_methods

from runs.models import Job
from runs.run_views import queue_from_form
from runs.serializers import SituationTestingRequestSerializer
from runs.situation_runs import ENGINES

UPLOADS = ("data", "counterfactuals")
ENGINE_TEXT = {"local": "this machine (the job's worker)", "dask": "Dask (the server's cluster, else a local one)"}
LISTS = ("features", "k")  # one text box each, split at commas and spaces


@login_required
@require_http_methods(["GET", "POST"])
def situation_testing_start(request: HttpRequest) -> HttpResponse:
    """GET: the form; POST: queue the job (tied to no study: its starter's) and go to its page, or the form again
    with each field's error (400; 429 beyond the job quota, 507 when an upload cannot be stored)."""
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        data: MultiValueDict[str, Any] = request.POST.copy()
        for name in LISTS:
            data.setlist(name, [v for text in request.POST.getlist(name) for v in re.split(r"[\s,]+", text) if v])
        data.update(request.FILES)
        serializer = SituationTestingRequestSerializer(data=data)
        if serializer.is_valid():
            params = dict(serializer.validated_data)
            uploads = {name: params.pop(name) for name in UPLOADS if params.get(name)}
            params.pop("counterfactuals", None)
            job, errors, status = queue_from_form(
                kind=Job.Kind.SITUATION_TESTING, user=request.user, params=params, uploads=uploads
            )
            if job is not None:
                return redirect("researcher:job", job_id=job.pk)
        else:
            errors, status = {field: _messages(found) for field, found in serializer.errors.items()}, 400
    context = {
        "errors": errors,
        "values": request.POST,
        "engines": [(name, ENGINE_TEXT[name]) for name in ENGINES],
    }
    return render(request, "researcher/situation_testing.html", context, status=status)


def _messages(found) -> list[str]:
    """A field's error messages; a list field's are per item (DRF: {index: messages}), named by position."""
    if isinstance(found, dict):
        return [f"value {int(i) + 1}: {m}" for i, messages in found.items() for m in messages]
    return [str(m) for m in found]
