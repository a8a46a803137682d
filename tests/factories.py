"""Small factories for tests: real rows through the real services where a service exists."""

from typing import Any

from django.contrib.auth.models import Group, User

from harness.models import ApiToken, Membership, Project
from runs_app.models import Run, Task
from runs_app.services import run_create, task_create
from sessions_app.models import Session
from sessions_app.services import session_create


def make_project(slug: str = "acme") -> Project:
    return Project.objects.get_or_create(slug=slug, defaults={"name": slug.title()})[0]


def make_session(project: Project, **kwargs: Any) -> Session:
    kwargs.setdefault("role", "manager")
    kwargs.setdefault("memory_policy", "bounded")
    return session_create(project=project, **kwargs)


def make_run(project: Project, session: Session | None = None, **kwargs: Any) -> Run:
    session = session or make_session(project)
    return run_create(project=project, session_id=session.pk, **kwargs)


def make_task(project: Project, **kwargs: Any) -> Task:
    kwargs.setdefault("objective", "Write chapter 3")
    return task_create(project=project, **kwargs)


def make_agent_token(project: Project, name: str = "agent-1", role: str = "agent") -> tuple[ApiToken, str]:
    secret = ApiToken.new_secret()
    token = ApiToken.objects.create(
        kind=ApiToken.Kind.AGENT, name=name, role=role, project=project,
        prefix=secret[:10], digest=ApiToken.hash_secret(secret),
    )
    return token, secret


def make_personal_token(user: User, name: str = "personal") -> tuple[ApiToken, str]:
    secret = ApiToken.new_secret()
    token = ApiToken.objects.create(
        kind=ApiToken.Kind.PERSONAL, name=name, role="user", user=user,
        prefix=secret[:10], digest=ApiToken.hash_secret(secret),
    )
    return token, secret


def make_user(
    username: str, *, role: str | None = None, projects: tuple[Project, ...] | list[Project] = (),
    password: str = "pw-123456",
) -> User:
    user = User.objects.create_user(username=username, password=password)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    for project in projects:
        Membership.objects.create(user=user, project=project)
    return user
