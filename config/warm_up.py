"""Work every web worker would otherwise do on its first requests, done once in gunicorn's master
before it forks (``preload_app``): import the URL configuration and every view, compile the URL
patterns' reverse lookups (what ``reverse`` and ``{% url %}`` otherwise build on their first call), compile the
participant pages' templates (every task type's, from the task registry) and the researcher's dashboard's, and
build the content of the studies most recently loaded. Forked workers share the result, so a burst of arrivals right
after a (re)start does not pay it eight times over. A missing template is an error; no database
(yet) leaves the studies to the first requests, as without the warm-up.
"""

import logging

from django.db import DatabaseError, connections
from django.template.loader import get_template
from django.urls import URLResolver, get_resolver

from studies.content import study_content
from studies.models import Study
from studies.study_facts import study_facts
from tasks import REGISTRY

log = logging.getLogger(__name__)

RECENT_STUDIES = 16  # a quarter of the per-worker study content cache (studies.content.CACHE_SIZE)
RESEARCHER_PAGES = ("researcher/dashboard.html",)  # the researcher's pages a new process is first asked for


def _reverse_lookups(resolver: URLResolver) -> None:
    """Build the reverse lookups of ``resolver`` and of every namespace under it."""
    for _, namespace in resolver.namespace_dict.values():
        _reverse_lookups(namespace)
    resolver.reverse_dict  # noqa: B018 - builds them


def warm_up() -> None:
    """Import the views, build the reverse lookups, compile the templates, load the newest studies' content."""
    get_resolver().url_patterns  # noqa: B018 - imports every view module
    _reverse_lookups(get_resolver())
    pages = {task.template({"kind": kind}) for kind, task in REGISTRY.items()}  # every task type's page
    for name in sorted(pages | {"surveys/consent.html", "surveys/done.html", *RESEARCHER_PAGES}):
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
