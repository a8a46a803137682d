"""Who is acting: one value every service takes, whichever door the call came through.

A console user (a person, from the console, the admin or the API with a personal token), an agent
(an agent token through the API) or the resume worker (a Celery process, named by its lease owner).
The audit log, `requested_by` and `decided_by` are written from it; the guards of the transition
tables (runs_app.machines) and the services' permission checks read its kind.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from harness.models import ApiToken


class ActorKind(StrEnum):
    USER = "user"
    AGENT = "agent"
    WORKER = "worker"


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    name: str  # the username, the agent token's name, or the worker's lease owner
    user: "User | None" = None
    token: "ApiToken | None" = None

    @classmethod
    def for_user(cls, user: "User") -> "Actor":
        return cls(ActorKind.USER, user.get_username(), user=user)

    @classmethod
    def for_agent(cls, name: str, token: "ApiToken | None" = None) -> "Actor":
        return cls(ActorKind.AGENT, name, token=token)

    @classmethod
    def of(cls, principal: object) -> "Actor":
        """The actor behind a request's `user`: an agent token's principal (harness.http.auth) or a user.

        Every door authenticates before it acts, so anything else (an anonymous user) is a bug there.
        """
        # Imported here: harness.http.auth loads DRF, and the transition tables (runs_app.machines) import
        # this module while the models load.
        from django.contrib.auth.models import User

        from harness.http.auth import AgentPrincipal

        if isinstance(principal, AgentPrincipal):
            return cls.for_agent(principal.name, principal.token)
        if isinstance(principal, User):
            return cls.for_user(principal)
        raise TypeError(f"no actor for a {type(principal).__name__}: the door must authenticate first")

    @classmethod
    def for_worker(cls, owner: str) -> "Actor":
        return cls(ActorKind.WORKER, owner)

    @property
    def label(self) -> str:
        """How the audit log and the records name it: `user:alice`, `agent:writer-1`, `worker:host:pid:x`."""
        return self.name if self.kind == ActorKind.WORKER and self.name.startswith("worker:") else (
            f"{self.kind}:{self.name}")

    @property
    def is_user(self) -> bool:
        return self.kind == ActorKind.USER

    @property
    def is_agent(self) -> bool:
        return self.kind == ActorKind.AGENT

    @property
    def is_worker(self) -> bool:
        return self.kind == ActorKind.WORKER
