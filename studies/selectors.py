"""Reads: which studies a researcher may see, and dashboard figures."""

from django.db.models import Q, QuerySet
from django.http import Http404

from surveys.models import Study


def studies_visible_to(user) -> QuerySet[Study]:
    """Every version of the studies the user owns or that are shared with them (all for superusers)."""
    if not user.is_authenticated or not user.is_active:
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(Q(owner=user) | Q(collaborators=user)).distinct()


def latest_versions(user) -> list[Study]:
    """The latest version of each study the user may see, by slug."""
    latest: dict[str, Study] = {}
    for study in studies_visible_to(user).order_by("slug", "-version"):
        latest.setdefault(study.slug, study)
    return list(latest.values())


def can_view(user, slug: str) -> bool:
    return studies_visible_to(user).filter(slug=slug).exists()


def visible_versions(user, slug: str) -> list[Study]:
    """The versions of ``slug`` the user may see, newest first; Http404 when there are none (another
    researcher's study looks like a missing one)."""
    versions = list(studies_visible_to(user).filter(slug=slug).order_by("-version"))
    if not versions:
        raise Http404("No such study among yours.")
    return versions
