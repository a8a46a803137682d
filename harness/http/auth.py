"""Bearer-token authentication for the API.

An agent token authenticates an `AgentPrincipal` bound to one project; a personal token
authenticates its console user. Tokens are looked up by the SHA-256 of the secret, on every
request (no cache: a revoked or expired token fails on its next request, in every worker process).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from harness.db import prepared_cursor
from harness.http.context import context_of
from harness.models import ApiToken, Project
from harness.ops import logs

if TYPE_CHECKING:  # harness.http.errors loads DRF's views, whose settings import this module
    from harness.http.errors import DomainError


@dataclass(frozen=True)
class AgentPrincipal:
    """The `request.user` of an agent token: it acts in one project and is never a console user."""

    token: ApiToken
    project: Project

    is_authenticated = True
    is_active = True
    is_superuser = False
    is_staff = False
    is_agent = True

    @property
    def name(self) -> str:
        return self.token.name

    @property
    def pk(self) -> str:
        return f"agent:{self.token.pk}"

    @property
    def end_user(self) -> str | None:
        """The end user a narrowed token is confined to (harness.narrowing); None for a project-wide token."""
        return self.token.end_user or None if self.token.parent_id is not None else None

    @property
    def agent_key(self) -> str:
        return self.token.agent_key

    def get_username(self) -> str:
        return f"agent:{self.token.name}"

    def __str__(self) -> str:
        return self.get_username()


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[object, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("The Authorization header is 'Bearer <token>'.")
        try:
            secret = header[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("The token is not valid.") from None
        token = bearer_token(request._request, ApiToken.hash_secret(secret))
        if token is None:
            raise exceptions.AuthenticationFailed("The token is not valid or was revoked.")
        token_used(token)
        if token.kind == ApiToken.Kind.AGENT:
            if token.project is None:  # the table's apitoken_kind_owner constraint gives every agent token one
                raise exceptions.AuthenticationFailed("The token is not valid.")
            frozen = frozen_write_refusal(token, write=request.method not in SAFE_METHODS)
            if frozen is not None:
                raise frozen
            return AgentPrincipal(token=token, project=token.project), token
        user = get_user_model().objects.filter(pk=token.user_id, is_active=True).first() if token.user_id else None
        if user is None:
            raise exceptions.AuthenticationFailed("The token's user is inactive.")
        token.user = user
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def bearer_token(request: HttpRequest, digest: str) -> ApiToken | None:
    """The live token with this digest: the one lookup both API doors use (the plain path's plain_caller and DRF's
    BearerTokenAuthentication). The request's context (harness.http.context) keeps what its first statement found
    (the Idempotency-Key's reservation, or an earlier call of this), else it is looked up now and kept there for the
    rest of the request."""
    context = context_of(request)
    if context.found(digest):
        return context.token
    token = token_lookup(digest)
    found_token(request, digest, token)
    return token


def found_token(request: HttpRequest, digest: str, token: ApiToken | None) -> None:
    """Keep a lookup's answer for the rest of the request (None: no live token has this digest)."""
    context = context_of(request)
    context.digest, context.token = digest, token


def token_used(token: ApiToken) -> None:
    """What both API doors do with the token they found: record its use, and name its project in the request's log
    lines (harness.ops.logs)."""
    touch_last_used(token)
    if token.project_id is not None and token.project is not None:
        logs.bind(project=token.project.slug)


def touch_last_used(token: ApiToken) -> None:
    """Record that the token was used, at most once a minute, so a busy agent does not write its row on every
    request."""
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        # The same request authenticated again (harness.http.plain handing over) writes nothing.
        token.last_used_at = now


def frozen_write_refusal(token: ApiToken, *, write: bool) -> "DomainError | None":
    """An agent's write to a frozen project is refused (409 project_frozen), the first clause of the may-call rule
    (harness.http.permissions.agent_call_refusal). BearerTokenAuthentication asks it, where every agent request
    passes whatever its view or permission class, with the project's freeze read by the token's own statement.
    Reads stay allowed: the project's state remains inspectable while it is frozen."""
    project = token.project
    if not write or project is None or project.frozen_at is None:
        return None
    # Imported here: harness.http.errors loads DRF's views, whose settings import this module.
    from harness.tenancy import project_frozen_error

    return project_frozen_error(project)


# Every API request runs this, so it is one hand-written statement: the ORM's select_related query
# cost more to compile than to run (about 40% of an append's request under cProfile).
# S608: the table names come from the models' metadata; the digest is a bound parameter.
# A narrowed token (harness.narrowing) is live only while its parent is: revoking or expiring the agent token that
# minted it ends it on its next request too, by the same statement.
TOKEN_COLUMNS = 16  # of TOKEN_SQL
TOKEN_SQL = f"""
SELECT t.id, t.kind, t.name, t.role, t.project_id, t.user_id, t.prefix, t.last_used_at,
       t.agent_identity, t.parent_id, t.end_user, t.scope_session_id,
       p.slug, p.name, p.created_at, p.frozen_at
  FROM {ApiToken._meta.db_table} t
  LEFT JOIN {Project._meta.db_table} p ON p.id = t.project_id
 WHERE t.digest = %s AND t.revoked_at IS NULL
   AND (t.expires_at IS NULL OR t.expires_at > statement_timestamp())
   AND (t.parent_id IS NULL OR EXISTS (
        SELECT 1 FROM {ApiToken._meta.db_table} pt
         WHERE pt.id = t.parent_id AND pt.revoked_at IS NULL
           AND (pt.expires_at IS NULL OR pt.expires_at > statement_timestamp())))
"""  # noqa: S608


def _token_row(digest: str) -> tuple[Any, ...] | None:
    with prepared_cursor() as cursor:
        cursor.execute(TOKEN_SQL, [digest])
        row: tuple[Any, ...] | None = cursor.fetchone()
        return row


_T = TypeVar("_T")


def as_first_statement(run: Callable[[], _T]) -> _T:
    """Run a request's first statement so that it stands in for Django's health check (a `SELECT 1`
    round trip before the first query of every request): a persistent connection the server dropped
    fails it, and then it runs once more on a new connection. Only for statements safe to repeat."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.connection is None or getattr(db, "health_check_done", True) or db.in_atomic_block:
        return run()
    db.health_check_done = True  # type: ignore[attr-defined]  # django-stubs lack it
    try:
        return run()
    except (OperationalError, InterfaceError):
        db.close()
        return run()


def token_from_row(row: tuple[Any, ...]) -> ApiToken:
    """The token (and its project) from a row of TOKEN_SQL's columns."""
    token = ApiToken.from_db(DEFAULT_DB_ALIAS, _TOKEN_FIELDS, row[:12])
    if token.project_id is not None:
        token.project = Project.from_db(DEFAULT_DB_ALIAS, _PROJECT_FIELDS, (token.project_id, *row[12:16]))
    return token


# In the model's field order, as from_db takes them.
_TOKEN_FIELDS = ["id", "kind", "name", "role", "project_id", "user_id", "prefix", "last_used_at", "agent_identity",
                 "parent_id", "end_user", "scope_session_id"]
_PROJECT_FIELDS = ["id", "slug", "name", "created_at", "frozen_at"]


def token_lookup(digest: str) -> ApiToken | None:
    """The live (unrevoked, unexpired) token with this digest and its project, in one statement; None if none.

    The instances are built like the ORM's own (`from_db`), so a field not read here (the digest,
    created_at, revoked_at) loads on access instead of holding a wrong value.
    """
    row = as_first_statement(lambda: _token_row(digest))
    return None if row is None else token_from_row(row)


# --- the token checked inside the request's own statement (harness.http.plain) -----------------------------
# The plain path looks a token up once per process (token_lookup) and then, instead of a lookup statement per
# request, hands the service a TokenCheck: the service's one statement carries CALLER_SQL as a CTE and reads or
# writes nothing unless CALLER_HOLDS, so a token revoked, expired or changed a moment ago is refused by the very
# statement that would have used it (the rule above: no cache decides whether a token is good). Expiry is read
# against statement_timestamp(), as the ORM's Now() is, not now(): now() is the transaction's start, and a check
# inside a long transaction (a test's, or a batch's) would take a token that expired since then for live.
# A statement with no check (every other door) finds the CTE's one NULL row, and its condition holds.


@dataclass(frozen=True)
class TokenCheck:
    """Whether the caller's token is, in the statement that uses it, a live agent token of this project with one
    of these roles (and, for a write, its project not frozen)."""

    digest: str
    project_id: int
    roles: tuple[str, ...]
    write: bool


CALLER_SQL = f"""caller AS (
    SELECT t.id FROM {ApiToken._meta.db_table} t JOIN {Project._meta.db_table} p ON p.id = t.project_id
     WHERE t.digest = %(caller_digest)s::text AND t.kind = '{ApiToken.Kind.AGENT.value}'
       AND t.project_id = %(caller_project)s::bigint AND t.revoked_at IS NULL
       AND (t.expires_at IS NULL OR t.expires_at > statement_timestamp())
       AND t.role = ANY(string_to_array(%(caller_roles)s::text, ','))
       AND (NOT %(caller_write)s::boolean OR p.frozen_at IS NULL)
    UNION ALL
    SELECT NULL WHERE %(caller_digest)s::text IS NULL
)"""  # noqa: S608 - the table names come from the models' metadata; every value is a bound parameter
CALLER_HOLDS = "EXISTS (SELECT 1 FROM caller)"


def caller_params(check: TokenCheck | None) -> dict[str, Any]:
    if check is None:
        return {"caller_digest": None, "caller_project": None, "caller_roles": "", "caller_write": False}
    # The roles as one comma-joined text, split by PostgreSQL: a text[] parameter is dumped in Python, element by
    # element (the roles are TokenRole's values, none with a comma).
    return {"caller_digest": check.digest, "caller_project": check.project_id, "caller_roles": ",".join(check.roles),
            "caller_write": check.write}

