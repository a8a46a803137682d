"""Who may call which API operation. Project scoping is separate: see harness.http.api_base.scope."""

import functools
from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from harness.http.auth import AgentPrincipal, frozen_write_refusal
from harness.http.errors import DomainError, Forbidden
from harness.models import ApiToken
from harness.tenancy import Role, user_has_role


class TokenRole:
    """An agent token's role (ApiToken.role): `agent` reads and writes, `reader` only reads.

    `handoff_receiver` is made by a handoff's issue for its receiver (runs_app.services.handoffs): it calls
    only the views that declare `receiver_token_allowed` (read, accept and return that one handoff), which
    scope it to its handoff; nothing else of the project, the origin's transcript, runs and memory included.
    """

    AGENT = "agent"
    READER = "reader"
    HANDOFF_RECEIVER = "handoff_receiver"
    ALL = (AGENT, READER)
    ORDER = (AGENT, READER, HANDOFF_RECEIVER)  # every role, in the order roles_that_may_call lists them
    WRITERS = frozenset({AGENT, HANDOFF_RECEIVER})


def receiver_token_id(request: Request) -> int | None:
    """The token's id when the caller holds a handoff receiver's credential (the views scope it to its
    handoff); None for any other caller."""
    user = request.user
    if isinstance(user, AgentPrincipal) and user.token.role == TokenRole.HANDOFF_RECEIVER:
        return int(user.token.pk)
    return None


def narrowed_principal(request: Request) -> AgentPrincipal | None:
    """The caller when it holds a token narrowed to one end user (harness.narrowing); None for any other."""
    user = request.user
    if isinstance(user, AgentPrincipal) and user.token.parent_id is not None:
        return user
    return None


def caller_end_user(request: Request) -> str | None:
    """The end user a narrowed token confines the request to; None for every other caller."""
    narrowed = narrowed_principal(request)
    return narrowed.end_user if narrowed is not None else None


def agent_call_refusal(token: ApiToken, *, write: bool, view: Any = None) -> DomainError | None:
    """Whether an agent token may make this call: None, or the refusal. The one may-call rule of both API doors:
    DRF's AgentApiAccess raises what it returns; the plain path (harness.http.plain, `view` None: its calls admit
    neither a handoff receiver nor a narrowed token, whose selectors must confine them) hands any refusal to DRF's
    view, which raises it; the token its own statement checks (harness.http.auth.TokenCheck) holds the roles this
    admits (`roles_that_may_call`). In this order, the order a caller has always been told:

    1. A write to a frozen project: 409 `project_frozen` (not final). BearerTokenAuthentication refuses it first,
       for every view whatever its permission class (harness.http.auth.frozen_write_refusal, this same clause).
    2. A handoff receiver's credential calls only the views that admit it (`receiver_token_allowed`), which scope
       it to its handoff: 403 `receiver_token_scope`.
    3. A token narrowed to one end user calls only the views that declare `narrowed_token_allowed` (sessions, their
       items, memory, and what a LangGraph graph serving the user calls: its threads, their runs' reads, usage and
       approval requests, and those approvals), whose selectors confine it to its user, and no other: 403
       `narrowed_token_scope`, so a new view is closed to it until it is made to confine it.
    4. A write needs a role that writes (TokenRole.WRITERS): 403 `token_read_only`.
    """
    frozen = frozen_write_refusal(token, write=write)
    if frozen is not None:
        return frozen
    return _role_refusal(token.role, narrowed=token.parent_id is not None, write=write,
                         receiver_allowed=bool(getattr(view, "receiver_token_allowed", False)),
                         narrowed_allowed=bool(getattr(view, "narrowed_token_allowed", False)))


def _role_refusal(role: str, *, narrowed: bool, write: bool, receiver_allowed: bool, narrowed_allowed: bool
                  ) -> Forbidden | None:
    """Clauses 2-4 of `agent_call_refusal`: what the token's role and narrowing alone decide."""
    if role == TokenRole.HANDOFF_RECEIVER and not receiver_allowed:
        return Forbidden("A handoff receiver's token reads its handoff, accepts it and returns its result; "
                         "nothing else.", code="receiver_token_scope")
    if narrowed and not narrowed_allowed:
        return Forbidden("A token narrowed to one end user reaches that user's sessions, their items, memory and "
                         "LangGraph threads; this operation takes the project's agent token.",
                         code="narrowed_token_scope")
    if write and role not in TokenRole.WRITERS:
        return Forbidden("This token may only read.", code="token_read_only")
    return None


@functools.cache
def roles_that_may_call(*, write: bool) -> tuple[str, ...]:
    """The roles `agent_call_refusal` admits for a project-wide token on a view that admits no receiver and no
    narrowed token (the plain path's): what the call's own statement checks a known token for (TokenCheck)."""
    return tuple(role for role in TokenRole.ORDER
                 if _role_refusal(role, narrowed=False, write=write, receiver_allowed=False,
                                  narrowed_allowed=False) is None)


def refuse_receiver_token(request: Request, view: Any) -> None:
    """Clauses 2 and 3 of `agent_call_refusal` for any view's agent caller (OperatorWrites asks them before it
    refuses every agent write, so a receiver's or a narrowed token's refusal says what it always said)."""
    user = request.user
    if isinstance(user, AgentPrincipal):
        refusal = _role_refusal(user.token.role, narrowed=user.token.parent_id is not None, write=False,
                                receiver_allowed=bool(getattr(view, "receiver_token_allowed", False)),
                                narrowed_allowed=bool(getattr(view, "narrowed_token_allowed", False)))
        if refusal is not None:
            raise refusal


def _authenticated(request: Request) -> bool:
    user = request.user
    return user is not None and bool(user.is_authenticated)


class AgentApiAccess(BasePermission):
    """The agent endpoints.

    Reads: any agent token, or a console user holding a role (reviewer, operator, admin), within the
    projects they can see. Writes: an agent token whose role may write; people steer runs through the
    console and the decision endpoint, never by posting as an agent.
    """

    def has_permission(self, request: Request, view: Any) -> bool:
        if not _authenticated(request):
            return False  # DRF answers 401 (not_authenticated)
        user = request.user
        if isinstance(user, AgentPrincipal):
            refusal = agent_call_refusal(user.token, write=request.method not in SAFE_METHODS, view=view)
            if refusal is not None:
                raise refusal
            return True
        if request.method not in SAFE_METHODS:
            raise Forbidden("Only agent tokens write through this endpoint.", code="agent_token_required")
        if not any(user_has_role(user, role) for role in Role.ALL):
            raise Forbidden("Your account holds no role for the API.", code="role_required")
        return True


class PersonWrites(AgentApiAccess):
    """Reads as AgentApiAccess; a write is a person's holding `role` (a personal token or a login session), never
    an agent token's (403 `agent_code`): what it writes decides for the agents. The role in the record's own
    project is the service's check (harness.tenancy.user_has_role); here, the role in some project (403
    `role_code`)."""

    role = Role.OPERATOR
    agent_code = role_code = "not_an_operator"
    agent_detail = "Only an operator sets this; agent tokens cannot."
    role_detail = "Only an operator sets this."

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS or not _authenticated(request):
            return super().has_permission(request, view)
        user = request.user
        if isinstance(user, AgentPrincipal):
            refuse_receiver_token(request, view)
            raise Forbidden(self.agent_detail, code=self.agent_code)
        if not user_has_role(user, self.role):
            raise Forbidden(self.role_detail, code=self.role_code)
        return True


class OperatorWrites(PersonWrites):
    """A write is an operator's: what it sets decides for the agents (a project's retention policy, an approval
    policy)."""


class ReviewerWrites(PersonWrites):
    """A write is a reviewer's: what it writes approves for the agents (a standing approval)."""

    role = Role.REVIEWER
    agent_code, role_code = "not_a_person", "not_a_reviewer"
    agent_detail = "Only a person writes this; agent tokens cannot."
    role_detail = "Only a reviewer writes this."


class ReviewerOnly(BasePermission):
    """A console user with the reviewer role (login session or personal token); no agent token, ever."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if not _authenticated(request):
            return False
        user = request.user
        if isinstance(user, AgentPrincipal):
            raise Forbidden("Agent tokens cannot decide approvals.", code="agent_cannot_decide")
        if not user_has_role(user, Role.REVIEWER):
            raise Forbidden("Only reviewers decide approvals.", code="not_a_reviewer")
        return True
