"""Who may call which API operation. Project scoping is separate: see harness.http.api_base.scope."""

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from harness.http.auth import AgentPrincipal
from harness.http.errors import Forbidden
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


def refuse_receiver_token(request: Request, view: Any) -> None:
    """A handoff receiver's credential calls only the views that admit it (and scope it); so does a token narrowed
    to one end user: only the views that declare `narrowed_token_allowed` (sessions, their items, memory, and
    what a LangGraph graph serving the user calls: its threads, their runs' reads, usage and approval requests,
    and those approvals), whose selectors confine it to its user, and no other (403 `narrowed_token_scope`), so a
    new view is closed to it until it is made to confine it."""
    if receiver_token_id(request) is not None and not getattr(view, "receiver_token_allowed", False):
        raise Forbidden("A handoff receiver's token reads its handoff, accepts it and returns its result; "
                        "nothing else.", code="receiver_token_scope")
    if narrowed_principal(request) is not None and not getattr(view, "narrowed_token_allowed", False):
        raise Forbidden("A token narrowed to one end user reaches that user's sessions, their items, memory and "
                        "LangGraph threads; this operation takes the project's agent token.",
                        code="narrowed_token_scope")


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
            refuse_receiver_token(request, view)
            if request.method in SAFE_METHODS or user.token.role in TokenRole.WRITERS:
                return True
            raise Forbidden("This token may only read.", code="token_read_only")
        if request.method not in SAFE_METHODS:
            raise Forbidden("Only agent tokens write through this endpoint.", code="agent_token_required")
        if not any(user_has_role(user, role) for role in Role.ALL):
            raise Forbidden("Your account holds no role for the API.", code="role_required")
        return True


class OperatorWrites(AgentApiAccess):
    """Reads as AgentApiAccess; a write is a person's with the operator role (a personal token or a login
    session), never an agent token's: what it sets decides for the agents (a project's retention policy).
    The role in the record's own project is the service's check (harness.tenancy.user_has_role)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS or not _authenticated(request):
            return super().has_permission(request, view)
        user = request.user
        if isinstance(user, AgentPrincipal):
            refuse_receiver_token(request, view)
            raise Forbidden("Only an operator sets this; agent tokens cannot.", code="not_an_operator")
        if not user_has_role(user, Role.OPERATOR):
            raise Forbidden("Only an operator sets this.", code="not_an_operator")
        return True


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
