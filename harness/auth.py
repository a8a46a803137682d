"""Bearer-token authentication for the API.

An agent token authenticates an `AgentPrincipal` bound to one project; a personal token
authenticates its console user. Tokens are looked up by the SHA-256 of the secret.
"""

from dataclasses import dataclass

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from harness.models import ApiToken, Project


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
        token = (
            ApiToken.objects.select_related("project", "user")
            .filter(digest=ApiToken.hash_secret(secret), revoked_at__isnull=True)
            .first()
        )
        if token is None:
            raise exceptions.AuthenticationFailed("The token is not valid or was revoked.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            # Throttled so a busy agent does not write the token row on every request.
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        if token.kind == ApiToken.Kind.AGENT:
            assert token.project is not None
            return AgentPrincipal(token=token, project=token.project), token
        if token.user is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("The token's user is inactive.")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
