"""Work every web worker would otherwise do on its first requests, done once in gunicorn's master
before it forks (``preload_app``): import the URL configuration and every view, compile the
participant pages' templates, and build the content of the studies most recently loaded. Forked
workers share the result, so a burst of arrivals right after a (re)start does not pay it eight
times over. Nothing here is required: a failure (no database yet, say) leaves it to the first
requests, as without the warm-up.
"""

import logging

from django.db import DatabaseError, connections
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.urls import get_resolver

log = logging.getLogger(__name__)

PARTICIPANT_TEMPLATES = [
    "surveys/consent.html",
    "surveys/page_instructions.html",
    "surveys/page_questionnaire.html",
    "surveys/page_attention.html",
    "surveys/page_likert.html",
    "surveys/page_output.html",
    "surveys/page_disagreement.html",
    "surveys/page_pair_distance.html",
    "surveys/page_fair_score.html",
    "surveys/page_agree.html",
    "surveys/page_rate.html",
    "surveys/page_pair_comparable.html",
    "surveys/done.html",
]
RECENT_STUDIES = 16  # a quarter of the per-worker study content cache (studies.content.CACHE_SIZE)


def warm_up() -> None:
    """Import the views, compile the participant templates, load the newest studies' content."""
    get_resolver().url_patterns  # noqa: B018 - imports every view module
    for name in PARTICIPANT_TEMPLATES:
        try:
            get_template(name)
        except TemplateDoesNotExist:
            log.warning("warm-up: no template %s", name)
    from studies.content import study_content
    from studies.study_facts import study_facts
    from surveys.models import Study

    try:
        for study_id, spec_hash in Study.objects.order_by("-created_at").values_list("pk", "spec_hash")[
            :RECENT_STUDIES
        ]:
            facts = study_facts(study_id, spec_hash=spec_hash)
            if facts.spec.get("format", 1) == 2:
                study_content(facts.spec, facts.spec_hash)
    except DatabaseError as exc:
        log.warning("warm-up: studies not loaded (%s)", exc)
    finally:
        connections.close_all()  # never share a connection with the forked workers
