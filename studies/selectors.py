"""Reads: which studies a researcher may see, and dashboard figures."""

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from studies.models import Collaborator, Study


def owning_versions() -> QuerySet[Study]:
    """The first (lowest) version of every study: its owner and collaborators are those of every
    version of the slug, whatever a later version's own fields say."""
    first = Study.objects.filter(slug=OuterRef("slug")).order_by("version").values("pk")[:1]
    return Study.objects.filter(pk=Subquery(first))


def owning_version(slug: str) -> Study | None:
    """The version of ``slug`` that holds the study's owner and collaborators (see :func:`owning_versions`)."""
    return Study.objects.filter(slug=slug).select_related("owner").order_by("version").first()


def studies_visible_to(user) -> QuerySet[Study]:
    """Every version of the studies the user owns or that are shared with them, as the first version
    says (all for superusers)."""
    if not _active(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    slugs = owning_versions().filter(Q(owner=user) | Q(collaborators=user)).values("slug")
    return Study.objects.filter(slug__in=slugs)


def latest_versions(user) -> list[Study]:
    """The latest version of each study the user may see, by slug."""
    latest: dict[str, Study] = {}
    for study in studies_visible_to(user).order_by("slug", "-version"):
        latest.setdefault(study.slug, study)
    return list(latest.values())


def can_view(user, slug: str) -> bool:
    return studies_visible_to(user).filter(slug=slug).exists()


def visible_versions(user, slug: str) -> list[Study]:
    """The versions of ``slug`` the user may see, newest first (as :func:`studies_visible_to` says, in two plain
    queries: the versions, then whether the first one is shared with the user); Http404 when there are none
    (another researcher's study looks like a missing one)."""
    versions = list(Study.objects.filter(slug=slug).order_by("-version")) if _active(user) else []
    if versions and not (user.is_superuser or _grants(versions[-1].pk, versions[-1].owner_id, user)):
        versions = []
    if not versions:
        raise Http404("No such study among yours.")
    return versions


def _active(user) -> bool:
    return bool(user.is_authenticated and user.is_active)


def _grants(first_pk: int, owner_id: int | None, user, *, role: str | None = None) -> bool:
    """Whether a study's first version (its pk and owner) lets ``user`` in: as its owner, or as a
    collaborator (of ``role`` when given)."""
    if owner_id == user.pk:
        return True
    shared = Collaborator.objects.filter(study_id=first_pk, user=user)
    return (shared if role is None else shared.filter(role=role)).exists()


def may_edit(user, slug: str) -> bool:
    """Whether ``user`` may change the study's state and start its runs: its owner, a superuser, or a
    collaborator with the editor role (a viewer only sees it)."""
    if not _active(user):
        return False
    if user.is_superuser:
        return True
    first = Study.objects.filter(slug=slug).order_by("version").values_list("pk", "owner_id").first()
    return first is not None and _grants(*first, user, role=Collaborator.Role.EDITOR)
