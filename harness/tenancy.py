"""Who may see and do what. Roles are Django groups; projects are reached through Membership.

A user's group names and visible project ids are read once per user instance and kept on it (as
Django keeps a user's permissions in `_perm_cache`): a request's user is loaded for that request, so
each request reads them at most once however many checks it makes (the reviewer permission, then the
decision's own check, say), and a change of role or membership is seen by the next request.
"""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from harness.models import Project


class Role:
    REVIEWER = "reviewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    ALL = (REVIEWER, OPERATOR, ADMIN)


_GROUPS_CACHE = "_harness_group_names"
_PROJECTS_CACHE = "_harness_project_ids"


def user_has_role(user: AbstractBaseUser | AnonymousUser, role: str) -> bool:
    """Admins (the group or a superuser) hold every role."""
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    names: frozenset[str] | None = getattr(user, _GROUPS_CACHE, None)
    if names is None:
        names = frozenset(user.groups.values_list("name", flat=True))
        setattr(user, _GROUPS_CACHE, names)
    return role in names or Role.ADMIN in names


def projects_for_user(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    if not isinstance(user, User) or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def user_can_see_project(user: AbstractBaseUser | AnonymousUser, project_id: int) -> bool:
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return Project.objects.filter(pk=project_id).exists()
    visible: frozenset[int] | None = getattr(user, _PROJECTS_CACHE, None)
    if visible is None:
        visible = frozenset(projects_for_user(user).values_list("pk", flat=True))
        setattr(user, _PROJECTS_CACHE, visible)
    return project_id in visible
