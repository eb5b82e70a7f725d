"""A study's collaborators: who it is shared with and their role (``Collaborator.Role``: a viewer sees
the dashboard, reports and exports; an editor also changes the study's state, starts runs and cancels
jobs). Only the study's owner (its first version's, and superusers) adds, re-roles and removes them,
each change in one transaction with its line in the log (``CollaboratorChange``: who changed what, for
whom, when).
The first version holds the collaborators (``studies.selectors.owning_version``)."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from studies.models import Collaborator, CollaboratorChange, Study
from studies.selectors import owning_version

ROLES: tuple[str, ...] = tuple(Collaborator.Role.values)
ROLE_MEANINGS: dict[str, str] = {
    Collaborator.Role.VIEWER: "sees the dashboard, reports and exports",
    Collaborator.Role.EDITOR: "also changes the study's state, starts runs and cancels jobs",
}


class CollaboratorError(ValueError):
    """A change of collaborators that cannot be made; the message says why (nothing was changed)."""


def is_owner(user, slug: str) -> bool:
    """Whether ``user`` owns the study (its first version's owner) or is a superuser."""
    owning = owning_version(slug)
    return bool(user.is_superuser or (owning is not None and owning.owner_id == user.pk))


def _owning(slug: str, by) -> Study:
    owning = owning_version(slug)
    if owning is None:
        raise CollaboratorError(f"no study {slug!r}")
    if not is_owner(by, slug):
        raise CollaboratorError("only the study's owner may change its collaborators")
    return owning


def _role(role: str) -> str:
    if role not in ROLES:
        raise CollaboratorError(f"unknown role {role[:20]!r}; choose one of {', '.join(ROLES)}")
    return role


def _log(study: Study, username: str, action: str, role: str, by) -> None:
    CollaboratorChange.objects.create(
        study=study, username=username, action=action, role=role, changed_by=by, changed_at=timezone.now()
    )


def find_account(name: str):
    """The active account whose username is ``name`` or, failing that, whose e-mail address is (any
    case); :class:`CollaboratorError` when none or several are."""
    name = name.strip()
    users = get_user_model().objects.filter(is_active=True)
    found = list(users.filter(username=name)) or (list(users.filter(email__iexact=name)) if "@" in name else [])
    if not found:
        raise CollaboratorError(f"no researcher account with the username or e-mail {name[:150]!r}")
    if len(found) > 1:
        raise CollaboratorError(f"several accounts have the e-mail {name[:150]!r}: give the username")
    return found[0]


@transaction.atomic
def collaborator_add(*, slug: str, by, name: str, role: str) -> Collaborator:
    """Share the study with the account named ``name`` (username or e-mail) in ``role``; logged."""
    owning, role = _owning(slug, by), _role(role)
    user = find_account(name)
    if user.pk == owning.owner_id:
        raise CollaboratorError(f"{user.get_username()} owns the study")
    if Collaborator.objects.filter(study=owning, user=user).exists():
        raise CollaboratorError(f"{user.get_username()} is a collaborator already: change their role instead")
    collaborator = Collaborator.objects.create(study=owning, user=user, role=role)
    _log(owning, user.get_username(), CollaboratorChange.Action.ADDED, role, by)
    return collaborator


@transaction.atomic
def collaborator_set_role(*, slug: str, by, user_id: int, role: str) -> bool:
    """Give the collaborator ``user_id`` the role ``role``; False (nothing logged) when they had it."""
    owning, role = _owning(slug, by), _role(role)
    collaborator = Collaborator.objects.select_for_update().select_related("user").filter(study=owning, user_id=user_id)
    found = collaborator.first()
    if found is None:
        raise CollaboratorError("no such collaborator of this study")
    if found.role == role:
        return False
    collaborator.update(role=role)
    _log(owning, found.user.get_username(), CollaboratorChange.Action.ROLE, role, by)
    return True


@transaction.atomic
def collaborator_remove(*, slug: str, by, user_id: int) -> str:
    """Stop sharing the study with the collaborator ``user_id`` (they lose it and its jobs at once);
    returns their username; logged."""
    owning = _owning(slug, by)
    found = Collaborator.objects.select_related("user").filter(study=owning, user_id=user_id).first()
    if found is None:
        raise CollaboratorError("no such collaborator of this study")
    username = found.user.get_username()
    Collaborator.objects.filter(study__slug=slug, user_id=user_id).delete()  # every version's copy
    _log(owning, username, CollaboratorChange.Action.REMOVED, "", by)
    return username


def collaborators_of(slug: str) -> list[Collaborator]:
    """The study's collaborators with their roles, by username."""
    owning = owning_version(slug)
    if owning is None:
        return []
    return list(Collaborator.objects.filter(study=owning).select_related("user").order_by("user__username"))


def collaborator_history(slug: str, limit: int = 20) -> list[CollaboratorChange]:
    """The latest changes of the study's collaborators, newest first."""
    return list(CollaboratorChange.objects.filter(study__slug=slug).select_related("changed_by")[:limit])
