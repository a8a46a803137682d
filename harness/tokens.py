"""API token lifecycle: create, rotate (two valid tokens for a window), revoke.

Every door that makes or ends a token (the management commands, the admin's revoke action, the console's profile
page for a person's own tokens) calls these.
The lookup that enforces them is harness.http.auth's one statement: `revoked_at IS NULL` and `expires_at` in the
future by the database's clock, on every request, so a revocation or an expiry takes effect on the next one.
"""

import datetime as dt
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Least, Now
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import ApiToken, Project
from harness.tenancy import projects_for_user

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# A narrowed token's life: short by default, never long (a client re-mints before it ends: harness_client).
NARROWED_DEFAULT_SECONDS = 15 * 60
NARROWED_MAX_SECONDS = 60 * 60


def api_token_create(*, project: Project, name: str, role: str, expires_in: dt.timedelta | None = None,
                     expires_at: dt.datetime | None = None, agent_identity: str = "") -> tuple[ApiToken, str]:
    """A new agent token and its secret (shown once: only the SHA-256 is stored); it expires `expires_in`
    from now or at `expires_at`, or never. Its `agent` memory scope is `agent_identity`, or its name."""
    secret = ApiToken.new_secret()
    token = ApiToken.objects.create(
        kind=ApiToken.Kind.AGENT, name=name, role=role, project=project, prefix=secret[:10],
        digest=ApiToken.hash_secret(secret), agent_identity=agent_identity,
        expires_at=timezone.now() + expires_in if expires_in else expires_at,
    )
    return token, secret


def api_token_rotate(*, token_id: int, overlap: dt.timedelta, expires_in: dt.timedelta | None = None
                     ) -> tuple[ApiToken, str]:
    """Replace a live token with a new one of the same owner, name and role; the old one keeps working
    until `overlap` from now (or its own earlier expiry), so the agent can switch without a failed call.

    1. Lock the old token's row and check that it is live (a rotation of a dead token is refused: 409).
    2. Shorten its expiry to now + overlap (never lengthen it).
    3. Create the new token beside it, in the same transaction.
    """
    with transaction.atomic():
        old = _live(ApiToken.objects.select_for_update()).filter(pk=token_id).first()
        if old is None:
            if ApiToken.objects.filter(pk=token_id).exists():
                raise ConflictError("The token is revoked or expired; create a new one.", code="token_not_live")
            raise NotFoundError("No such token.")
        until = Now() + overlap
        ApiToken.objects.filter(pk=old.pk).update(
            expires_at=Least(F("expires_at"), until) if old.expires_at is not None else until)
        secret = ApiToken.new_secret()
        if old.parent_id is not None:
            raise ConflictError("A narrowed token is not rotated: mint a new one.", code="token_not_live")
        new = ApiToken.objects.create(
            kind=old.kind, name=old.name, role=old.role, project_id=old.project_id, user_id=old.user_id,
            agent_identity=old.agent_identity,
            prefix=secret[:10], digest=ApiToken.hash_secret(secret),
            expires_at=timezone.now() + expires_in if expires_in else None,
        )
    return new, secret


def api_tokens_revoke(tokens: QuerySet[ApiToken]) -> int:
    """Revoke at once (the next request with any of them gets 401), and the narrowed tokens they minted with them
    (the lookup refuses those already: this records it); returns how many of `tokens` were live."""
    now = timezone.now()
    ApiToken.objects.filter(parent__in=tokens.values("pk"), revoked_at__isnull=True).update(revoked_at=now)
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=now)


def _live(tokens: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
    return tokens.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=Now()), revoked_at__isnull=True)


# --- personal tokens: a person's own credential for the API (issue 30, part 1) ------------------------------------
# A personal token authenticates as its user (harness.http.auth), so it holds exactly the roles the user holds in each
# project (harness.tenancy) and its decisions are audited and recorded under the user's name; it cannot approve what
# the user requested, as no door of the user can. It always expires: a person's credential left in a script is
# bounded in time (PERSONAL_TOKEN_MAX_DAYS), and a rotation or a revocation ends it on the next request.

PERSONAL_TOKEN_MAX_DAYS = 365
PERSONAL_TOKEN_DEFAULT_DAYS = 30


def personal_tokens_of(user: "User") -> QuerySet[ApiToken]:
    """The user's own personal tokens, newest first: every door that lists, rotates or revokes one starts here, so
    another user's token is absent (404), whoever asks."""
    return ApiToken.objects.filter(kind=ApiToken.Kind.PERSONAL, user_id=user.pk).order_by("-created_at", "-pk")


def personal_token_status(token: ApiToken) -> str:
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return "expired"
    return "live"


def personal_token_create(*, user: "User", actor: Actor, name: str,
                          expires_in_days: float = PERSONAL_TOKEN_DEFAULT_DAYS, door: str = "console",
                          ) -> tuple[ApiToken, str]:
    """A new personal token for `user` and its secret, shown once (only the SHA-256 is stored, as for agent tokens).

    1. Validate: an active user, a name of 1 to 120 characters, an expiry of more than 0 and at most
       PERSONAL_TOKEN_MAX_DAYS days (400 `invalid_token_name` / `invalid_expiry` / `user_inactive`).
    2. Create the row; audit `token.personal_created` (name, prefix, expiry; never the secret).
    """
    name = _valid_name(name)
    expires_in = _valid_expiry(expires_in_days)
    if not user.is_active:
        raise ValidationFailed(f"{user.get_username()} is not an active user.", code="user_inactive")
    secret = ApiToken.new_secret()
    with transaction.atomic():
        token = ApiToken.objects.create(
            kind=ApiToken.Kind.PERSONAL, name=name, role="user", user=user, prefix=secret[:10],
            digest=ApiToken.hash_secret(secret), expires_at=timezone.now() + expires_in,
        )
        _audit(user, actor, "token.personal_created", token, door=door)
    return token, secret


def personal_token_rotate(*, user: "User", actor: Actor, token_id: int, overlap: dt.timedelta = dt.timedelta(0),
                          door: str = "console") -> tuple[ApiToken, str]:
    """Replace one of the user's live personal tokens by a new one of the same name and lifetime
    (`api_token_rotate`: the old one works until `overlap` from now; with no overlap, the default, it is revoked).

    1. The token must be the user's own personal token (404 otherwise, as if it did not exist).
    2. Rotate it (a dead one: 409 `token_not_live`); revoke the old one unless an overlap was asked for.
    3. Audit `token.personal_rotated` with the old and the new prefix.
    """
    with transaction.atomic():
        old = personal_tokens_of(user).filter(pk=token_id).first()
        if old is None:
            raise NotFoundError("No such token.")
        lifetime = (old.expires_at - old.created_at) if old.expires_at is not None else None
        lifetime = min(lifetime, dt.timedelta(days=PERSONAL_TOKEN_MAX_DAYS)) if lifetime else dt.timedelta(
            days=PERSONAL_TOKEN_DEFAULT_DAYS)
        new, secret = api_token_rotate(token_id=old.pk, overlap=overlap, expires_in=lifetime)
        if overlap <= dt.timedelta(0):  # a person rotates a token they fear leaked: it ends now, not at a deadline
            api_tokens_revoke(ApiToken.objects.filter(pk=old.pk))
        _audit(user, actor, "token.personal_rotated", new, door=door, replaced=old.prefix)
    return new, secret


def personal_token_revoke(*, user: "User", actor: Actor, token_id: int, door: str = "console") -> ApiToken:
    """Revoke one of the user's personal tokens (404 if it is not theirs); the next request with it gets 401.
    Audited `token.personal_revoked`; revoking a dead token again changes and audits nothing."""
    with transaction.atomic():
        token = personal_tokens_of(user).select_for_update().filter(pk=token_id).first()
        if token is None:
            raise NotFoundError("No such token.")
        if api_tokens_revoke(ApiToken.objects.filter(pk=token.pk)):
            token.refresh_from_db(fields=["revoked_at"])
            _audit(user, actor, "token.personal_revoked", token, door=door)
    return token


def _audit(user: "User", actor: Actor, action: str, token: ApiToken, **data: object) -> None:
    """Audit a personal token's change in every project the user can see.

    The audit chain is per project (AuditEntry.project is required) and a personal token has none: it acts in
    every project its user is a member of, so each of those projects' auditors must see that a credential able to
    act there appeared, was replaced or ended. A user who is a member of no project yet has no chain to record in,
    and their token can do nothing with any project's data until a membership gives it one.
    """
    details = {"owner": user.get_username(), "name": token.name, "prefix": token.prefix,
               "expires_at": token.expires_at.isoformat() if token.expires_at else None, **data}
    for project_id in projects_for_user(user).order_by("pk").values_list("pk", flat=True):
        audit_record(project=project_id, actor=actor, action=action, target=token, data=details)


def _valid_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 120:
        raise ValidationFailed("A token's name is 1 to 120 characters.", code="invalid_token_name")
    return name


def _valid_expiry(days: float) -> dt.timedelta:
    if not 0 < days <= PERSONAL_TOKEN_MAX_DAYS:
        raise ValidationFailed(f"A personal token expires after more than 0 and at most {PERSONAL_TOKEN_MAX_DAYS} "
                               "days.", code="invalid_expiry")
    return dt.timedelta(days=days)


def narrowed_token_mint(*, parent: ApiToken, end_user: str, session_id: int | None = None, agent: str | None = None,
                        expires_in: int = NARROWED_DEFAULT_SECONDS) -> tuple[ApiToken, str]:
    """A token narrowed to one end user (and optionally one session and one agent identity), minted by a live
    agent token of the project, and its secret (shown once; only the SHA-256 is stored).

    1. Only a project-wide agent or reader token mints: a narrowed token cannot (403 `narrowed_token_cannot_mint`),
       nor a handoff receiver's or a personal one (403 `agent_token_required`).
    2. The agent identity is the parent's, or one under it (`<parent identity>/<name>`): a token cannot be
       narrowed into another agent's memory. The session (checked by the caller's door: it is that end user's
       session of this project) is kept by id.
    3. It expires `expires_in` seconds from now (1..NARROWED_MAX_SECONDS), inherits the parent's name and role,
       and lives only while its parent does (harness.http.auth's lookup). The minting is audited, without the secret.
    """
    if parent.parent_id is not None:
        raise Forbidden("A narrowed token cannot mint another.", code="narrowed_token_cannot_mint")
    if parent.kind != ApiToken.Kind.AGENT or parent.project_id is None or parent.role not in ("agent", "reader"):
        raise Forbidden("Only a project's agent token mints narrowed tokens.", code="agent_token_required")
    end_user = (end_user or "").strip()
    if not end_user or len(end_user) > 200:
        raise ValidationFailed("end_user names the end user (1 to 200 characters).", code="invalid_end_user")
    if not 1 <= expires_in <= NARROWED_MAX_SECONDS:
        raise ValidationFailed(f"expires_in is between 1 and {NARROWED_MAX_SECONDS} seconds.", code="invalid_expiry")
    identity = parent.agent_key
    if agent is not None and agent != identity and not (agent.startswith(identity + "/") and len(agent) <= 200):
        raise Forbidden(f"A narrowed token's agent identity is {identity!r} or one under it ({identity}/...).",
                        code="agent_scope_not_yours")
    secret = ApiToken.new_secret()
    expires_at = timezone.now() + dt.timedelta(seconds=expires_in)
    with transaction.atomic():
        token = ApiToken.objects.create(
            kind=ApiToken.Kind.AGENT, name=parent.name, role=parent.role, project_id=parent.project_id,
            prefix=secret[:10], digest=ApiToken.hash_secret(secret), parent=parent, end_user=end_user,
            scope_session_id=session_id, agent_identity=agent or identity,
            expires_at=expires_at,
        )
        audit_record(project=parent.project_id, actor=Actor.for_agent(parent.name, parent), action="token.narrowed",
                     target=token, data={"parent": parent.pk, "end_user": end_user, "session": session_id,
                                         "agent": token.agent_key, "expires_at": expires_at.isoformat()})
    return token, secret
