"""API token lifecycle: create, rotate (two valid tokens for a window), revoke.

Every door that makes or ends a token (the management commands, the admin's revoke action) calls these.
The lookup that enforces them is harness.auth's one statement: `revoked_at IS NULL` and `expires_at` in the
future by the database's clock, on every request, so a revocation or an expiry takes effect on the next one.
"""

import datetime as dt

from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Least, Now
from django.utils import timezone

from harness.errors import ConflictError, NotFoundError
from harness.models import ApiToken, Project


def api_token_create(*, project: Project, name: str, role: str, expires_in: dt.timedelta | None = None,
                     expires_at: dt.datetime | None = None) -> tuple[ApiToken, str]:
    """A new agent token and its secret (shown once: only the SHA-256 is stored); it expires `expires_in`
    from now or at `expires_at`, or never."""
    secret = ApiToken.new_secret()
    token = ApiToken.objects.create(
        kind=ApiToken.Kind.AGENT, name=name, role=role, project=project, prefix=secret[:10],
        digest=ApiToken.hash_secret(secret),
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
        new = ApiToken.objects.create(
            kind=old.kind, name=old.name, role=old.role, project_id=old.project_id, user_id=old.user_id,
            prefix=secret[:10], digest=ApiToken.hash_secret(secret),
            expires_at=timezone.now() + expires_in if expires_in else None,
        )
    return new, secret


def api_tokens_revoke(tokens: QuerySet[ApiToken]) -> int:
    """Revoke at once (the next request with any of them gets 401); returns how many were live."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


def _live(tokens: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
    return tokens.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=Now()), revoked_at__isnull=True)
