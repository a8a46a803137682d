"""Which memory scopes a caller reads and writes (issue 30): the scope key is the caller's, not free text.

- an operator (a person) reads and writes every scope;
- an agent token, every scope but another agent's: `agent` is its own identity (ApiToken.agent_key);
- a token narrowed to end user U reads `project`, `user:U`, `agent:<its identity>` and `session:<id>` of U's
  sessions (only its session when it names one), and writes `user:U` and those sessions; `project` and its
  `agent` scope only where that scope's write policy sets `end_user_tokens_write` (an admin's choice, off by
  default: the shared scopes are read-only to an end user's token).

A read of another scope is refused (403: `agent_scope_not_yours` for another agent's scope, `end_user_scope` for
another user's or another user's session); a list or a record outside them is absent (404); a write to a
read-only scope is 403 `scope_read_only`. An omitted scope_key means the caller's own (its identity, its user).
Every door goes through these: the API's selectors and the services (memory_write, memory_supersede).
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from harness.http.errors import Forbidden, ValidationFailed
from harness.models import ApiToken
from memory_app.models import MemoryScope, MemoryWritePolicy

if TYPE_CHECKING:
    from sessions_app.models import Session


@dataclass(frozen=True)
class MemoryCaller:
    """An agent token's bounds in memory (None stands for a person: no bound)."""

    agent_key: str
    end_user: str | None = None  # a narrowed token's end user
    session_id: int | None = None  # the one session a narrowed token names

    @classmethod
    def of(cls, token: ApiToken | None) -> "MemoryCaller | None":
        if token is None or token.kind != ApiToken.Kind.AGENT:
            return None
        if token.parent_id is None:
            return cls(agent_key=token.agent_key)
        return cls(agent_key=token.agent_key, end_user=token.end_user, session_id=token.scope_session_id)

    def _sessions(self, project_id: int) -> "QuerySet[Session]":
        from sessions_app.models import Session

        sessions = Session.objects.filter(project_id=project_id, end_user=self.end_user)
        return sessions.filter(pk=self.session_id) if self.session_id is not None else sessions

    def _session_keys(self, project_id: int) -> Q:
        keys = self._sessions(project_id).annotate(key=Cast("pk", CharField())).values("key")
        return Q(scope=MemoryScope.SESSION, scope_key__in=keys)

    def readable(self, project_id: int) -> Q:
        """The records of `project_id` this caller may see, as a filter."""
        own_agent = Q(scope=MemoryScope.AGENT, scope_key=self.agent_key)
        if self.end_user is None:
            return ~Q(scope=MemoryScope.AGENT) | own_agent
        return (Q(scope=MemoryScope.PROJECT) | Q(scope=MemoryScope.USER, scope_key=self.end_user) | own_agent
                | self._session_keys(project_id))

    def read_key(self, project_id: int, scope: str, scope_key: str) -> str:
        """The scope key this caller reads `scope` under (its own when omitted); 403 when it is another's."""
        scope_key = (scope_key or "").strip()
        if scope == MemoryScope.AGENT:
            if not scope_key:
                return self.agent_key
            if scope_key != self.agent_key:
                raise Forbidden(f"An agent token's agent scope is its own identity ({self.agent_key!r}).",
                                code="agent_scope_not_yours")
            return scope_key
        if self.end_user is None or scope == MemoryScope.PROJECT:
            return scope_key
        if scope == MemoryScope.USER:
            if scope_key and scope_key != self.end_user:
                raise Forbidden("This token is narrowed to another end user.", code="end_user_scope")
            return self.end_user
        if scope == MemoryScope.SESSION and scope_key:
            is_id = scope_key.isascii() and scope_key.isdigit() and len(scope_key) <= 18
            if not is_id or not self._sessions(project_id).filter(pk=int(scope_key)).exists():
                raise Forbidden("A narrowed token reads the session scopes of its end user's sessions only.",
                                code="end_user_scope")
        return scope_key

    def write_key(self, project_id: int, scope: str, scope_key: str) -> str:
        """The scope key this caller writes `scope` under; 403 when it is another's, or (narrowed) a project or
        agent scope whose write policy does not let end-user tokens write."""
        scope_key = self.read_key(project_id, scope, scope_key)
        if self.end_user is not None and scope in (MemoryScope.PROJECT, MemoryScope.AGENT):
            allowed = MemoryWritePolicy.objects.filter(project_id=project_id, scope=scope,
                                                       end_user_tokens_write=True).exists()
            if not allowed:
                raise Forbidden(f"A token narrowed to an end user only reads the {scope} scope (its write policy "
                                "does not let end-user tokens write).", code="scope_read_only")
        return scope_key

    def check_sources(self, project_id: int, source_run_id: int | None, source_session_id: int | None) -> None:
        """A narrowed token names as a write's provenance only its end user's sessions and their runs (400
        `invalid_source`, as for a source outside the project: another user's session is not there for it)."""
        if self.end_user is None:
            return
        from runs_app.models import Run

        sessions = self._sessions(project_id)
        if source_session_id is not None and not sessions.filter(pk=source_session_id).exists():
            raise ValidationFailed(f"Session {source_session_id} is not in this project.", code="invalid_source")
        if source_run_id is not None and not Run.objects.filter(pk=source_run_id, session__in=sessions).exists():
            raise ValidationFailed(f"Run {source_run_id} is not in this project.", code="invalid_source")
