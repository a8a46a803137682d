"""Who may see and do what. Roles are Django groups; projects are reached through Membership."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from harness.models import Project


class Role:
    REVIEWER = "reviewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    ALL = (REVIEWER, OPERATOR, ADMIN)


def user_has_role(user: AbstractBaseUser | AnonymousUser, role: str) -> bool:
    """Admins (the group or a superuser) hold every role."""
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    names = set(user.groups.values_list("name", flat=True))
    return role in names or Role.ADMIN in names


def projects_for_user(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    if not isinstance(user, User) or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def user_can_see_project(user: AbstractBaseUser | AnonymousUser, project_id: int) -> bool:
    return projects_for_user(user).filter(pk=project_id).exists()
