"""Who may see and do what, per project.

A role (reviewer, operator) holds in a project when the user is a superuser or in the admin group (every role
everywhere), in the role's global group and a member of the project (the groups predate per-project roles and
keep meaning "this role in every project I am a member of"), or a member whose Membership.roles names it.

A user's group names and memberships (project id -> roles) are read once per user instance and kept on it (as
Django keeps a user's permissions in `_perm_cache`): a request's user is loaded for that request, so each
request reads them at most once however many checks it makes, and a change of role or membership is seen by
the next request.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Model, Q, QuerySet

from harness.http.errors import ConflictError, DomainError, Forbidden, NotFoundError
from harness.models import Membership, Project

_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class EndUserScope:
    """What a token narrowed to one end user may reach inside its project (issue 30): the sessions tagged with
    `end_user` (only `session_id` when the token names one), and memory (memory_app.scoping). A door's read takes
    it beside `project_ids` (None: the caller is not narrowed) and the selector filters by it, so another user's
    session, and whatever hangs off it, is absent: 404, as another project's is."""

    end_user: str
    session_id: int | None = None
    agent_key: str = ""

    def sessions(self, sessions: QuerySet[_M]) -> QuerySet[_M]:
        """The sessions (a queryset of Session) this scope reaches."""
        sessions = sessions.filter(end_user=self.end_user)
        return sessions.filter(pk=self.session_id) if self.session_id is not None else sessions

    def hanging_off(self, rows: QuerySet[_M], session: str) -> QuerySet[_M]:
        """The rows of a queryset whose session (the lookup path `session`: "session" for a run, "run__session"
        for an approval) this scope reaches: what the runs app's doors confine a narrowed token to (a session's
        end_user is set at its creation and a run's session never changes, so a row found here stays reachable)."""
        rows = rows.filter(**{f"{session}__end_user": self.end_user})
        return rows.filter(**{session: self.session_id}) if self.session_id is not None else rows


class Role:
    REVIEWER = "reviewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    ALL = (REVIEWER, OPERATOR, ADMIN)


_GROUPS_CACHE = "_harness_group_names"
_MEMBERSHIPS_CACHE = "_harness_memberships"


def _group_names(user: User) -> frozenset[str]:
    names: frozenset[str] | None = getattr(user, _GROUPS_CACHE, None)
    if names is None:
        names = frozenset(user.groups.values_list("name", flat=True))
        setattr(user, _GROUPS_CACHE, names)
    return names


def _memberships(user: User) -> dict[int, frozenset[str]]:
    """The user's projects and the roles each membership names (one read per user instance)."""
    found: dict[int, frozenset[str]] | None = getattr(user, _MEMBERSHIPS_CACHE, None)
    if found is None:
        found = {pk: frozenset(roles) for pk, roles in Membership.objects.filter(user=user)
                 .values_list("project_id", "roles")}
        setattr(user, _MEMBERSHIPS_CACHE, found)
    return found


def _person(user: AbstractBaseUser | AnonymousUser | None) -> User | None:
    return user if isinstance(user, User) and user.is_active else None


def holds_role_everywhere(user: AbstractBaseUser | AnonymousUser | None, role: str) -> bool:
    """Superuser, the admin group, or the role's global group: the role in every project the user can see."""
    person = _person(user)
    if person is None:
        return False
    if person.is_superuser:
        return True
    names = _group_names(person)
    return Role.ADMIN in names or (role != Role.ADMIN and role in names)


def user_has_role(
    user: AbstractBaseUser | AnonymousUser | None, role: str, project_id: int | None = None
) -> bool:
    """Whether `user` holds `role` in `project_id`, or, without one, in at least one project (what a page or
    an endpoint asks before the service asks it for the record's own project). Admin is global only."""
    person = _person(user)
    if person is None:
        return False
    if holds_role_everywhere(person, role):
        return True
    if role == Role.ADMIN:
        return False
    memberships = _memberships(person)
    if project_id is None:
        return any(role in roles for roles in memberships.values())
    return role in memberships.get(project_id, frozenset())


def require_project_operator(user: AbstractBaseUser | AnonymousUser | None, project_id: int, *, doing: str) -> None:
    """A service's check that a person may do an operator's work in this project: not a member, 404 (the project
    does not exist for them); a member without the operator role there (or no person at all: an agent), 403
    `not_an_operator`."""
    person = _person(user)
    if person is None:
        raise Forbidden(f"Only operators {doing}.", code="not_an_operator")
    if not user_can_see_project(person, project_id):
        raise NotFoundError("This project does not exist.")
    if not user_has_role(person, Role.OPERATOR, project_id):
        raise Forbidden(f"Only operators of this project {doing}.", code="not_an_operator")


def role_project_ids(user: AbstractBaseUser | AnonymousUser | None, role: str, among: Sequence[int]) -> list[int]:
    """The ids in `among` (projects the user can see) where the user holds `role`."""
    return [pk for pk in among if user_has_role(user, role, pk)]


def projects_for_user(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    if not isinstance(user, User) or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def user_can_see_project(user: AbstractBaseUser | AnonymousUser, project_id: int) -> bool:
    person = _person(user)
    if person is None:
        return False
    if person.is_superuser:
        return Project.objects.filter(pk=project_id).exists()
    return project_id in _memberships(person)


def role_holders(project_id: int, role: str) -> QuerySet[User]:
    """The active members of the project who hold `role` in it (the same rule as `user_has_role`), by name.

    The membership's project and its roles are one filter() call so that they test the same membership row."""
    global_groups = [Role.ADMIN, role]
    return (User.objects.filter(Q(memberships__project_id=project_id, is_active=True)
                                & (Q(memberships__roles__contains=[role]) | Q(groups__name__in=global_groups)
                                   | Q(is_superuser=True)))
            .distinct().order_by("username"))


def acting_filter(user: User, role: str) -> Q:
    """The condition a decision's own UPDATE adds so that the role and the freeze are checked by the write
    itself (a subquery, no read of its own): the row's project is not frozen and, unless the user holds the
    role everywhere, is one whose membership names the role."""
    acting = Project.objects.filter(frozen_at__isnull=True)
    if not holds_role_everywhere(user, role):
        acting = acting.filter(memberships__user_id=user.pk, memberships__roles__contains=[role])
    return Q(project_id__in=acting.values("pk"))


def decision_scope(
    queryset: QuerySet[_M], *, actor_user: User | None, role: str, project: Project | int | None,
    project_ids: Sequence[int] | None, missing: str, refused: str, code: str,
) -> tuple[User, QuerySet[_M]]:
    """The deciding person and the rows they may see, for a decision's conditional write (approval_decide,
    effect_resolve).

    1. Only a person holding `role` in some project (403 `code` with `refused`); an agent or the worker never.
    2. The rows of `project` (404 `missing` when the user cannot see it) or, for a door that resolved the
       caller's scope already (the API), of `project_ids`.
    3. Narrowed by `acting_filter`: a project where the role holds and which is not frozen. A write this
       refuses is explained by `decision_refusal`.
    """
    if actor_user is None or not user_has_role(actor_user, role):
        raise Forbidden(refused, code=code)
    if project_ids is not None:
        return actor_user, queryset.filter(project_id__in=project_ids)
    if project is None:
        raise ValueError("a decision needs the project or the caller's project_ids")
    project_id = project if isinstance(project, int) else project.pk
    if not user_can_see_project(actor_user, project_id):
        raise NotFoundError(missing)
    return actor_user, queryset.filter(project_id=project_id)


def decision_refusal(
    user: User | None, role: str, project: Project | int, *, refused: str, code: str
) -> DomainError | None:
    """Why `acting_filter` refuses a write on a row of `project` the user can see, or None if it does not."""
    frozen = project_frozen_error(project)
    if frozen is not None:
        return frozen
    if not user_has_role(user, role, project if isinstance(project, int) else project.pk):
        return Forbidden(refused, code=code)
    return None


def project_frozen_error(project: Project | int) -> ConflictError | None:
    """409 `project_frozen` if the project is frozen (reads the project unless given the instance)."""
    if isinstance(project, Project):
        slug, frozen_at = project.slug, project.frozen_at
    else:
        found = Project.objects.filter(pk=project).values_list("slug", "frozen_at").first()
        if found is None:
            return None
        slug, frozen_at = found
    if frozen_at is None:
        return None
    return ConflictError(f"Project {slug} is frozen since {frozen_at.isoformat()}: no agent write and no decision "
                         "until an admin unfreezes it.", code="project_frozen",
                         # Not the request's final answer: the same key retried after the unfreeze must run.
                         final=False)
