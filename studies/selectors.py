"""Reads: which studies a researcher may see, and dashboard figures."""

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from studies.models import Study


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
    if not user.is_authenticated or not user.is_active:
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
    """The versions of ``slug`` the user may see, newest first; Http404 when there are none (another
    researcher's study looks like a missing one)."""
    versions = list(studies_visible_to(user).filter(slug=slug).order_by("-version"))
    if not versions:
        raise Http404("No such study among yours.")
    return versions


def may_edit(user, slug: str) -> bool:
    """Whether ``user`` may change the study's state and start its runs: its owner, a superuser, or a
    collaborator with the editor role (a viewer only sees it)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return (
        owning_versions()
        .filter(slug=slug)
        .filter(Q(owner=user) | Q(collaborator__user=user, collaborator__role="editor"))
        .exists()
    )
