"""Work every web worker would otherwise do on its first requests, done once in gunicorn's master
before it forks (``preload_app``): import the URL configuration and every view, compile the
participant pages' templates (every task type's, from the task registry), and build the content of
the studies most recently loaded. Forked workers share the result, so a burst of arrivals right
after a (re)start does not pay it eight times over. A missing template is an error; no database
(yet) leaves the studies to the first requests, as without the warm-up.
"""

import logging

from django.db import DatabaseError, connections
from django.template.loader import get_template
from django.urls import get_resolver

from studies.content import study_content
from studies.models import Study
from studies.study_facts import study_facts
from tasks import REGISTRY

log = logging.getLogger(__name__)

RECENT_STUDIES = 16  # a quarter of the per-worker study content cache (studies.content.CACHE_SIZE)


def warm_up() -> None:
    """Import the views, compile the participant templates, load the newest studies' content."""
    get_resolver().url_patterns  # noqa: B018 - imports every view module
    pages = {task.template({"kind": kind}) for kind, task in REGISTRY.items()}  # every task type's page
    for name in sorted(pages | {"surveys/consent.html", "surveys/done.html"}):
        get_template(name)
    try:
        for study_id, spec_hash in Study.objects.order_by("-created_at").values_list("pk", "spec_hash")[
            :RECENT_STUDIES
        ]:
            facts = study_facts(study_id, spec_hash=spec_hash)
            study_content(facts.spec, facts.spec_hash)
    except DatabaseError as exc:
        log.warning("warm-up: studies not loaded (%s)", exc)
    finally:
        connections.close_all()  # never share a connection with the forked workers
