"""POST /api/v1/tokens/narrow/: an agent token mints a short-lived token narrowed to one end user (issue 30).

Here, not in the kernel, because the optional session must be that end user's session of the project (this app's
selector); the token itself is made by harness.tokens.narrowed_token_mint, which refuses a narrowed caller, bounds
the expiry, binds the agent identity and audits the minting.
"""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from harness.http.api_base import AgentApiView, IdField, agent_project, scope
from harness.http.auth import AgentPrincipal
from harness.http.body import InSerializer
from harness.http.errors import Forbidden, ValidationFailed
from harness.tokens import NARROWED_DEFAULT_SECONDS, NARROWED_MAX_SECONDS, narrowed_token_mint
from sessions_app import selectors


class NarrowInSerializer(InSerializer):
    end_user = serializers.CharField(max_length=200, help_text="The end user the token is confined to.")
    session = IdField(required=False, allow_null=True, default=None,
                      help_text="Confine it to this one session too (a session of that end user).")
    agent = serializers.CharField(
        max_length=200, required=False, allow_null=True, default=None,
        help_text="Its agent identity (the key of its `agent` memory scope): the minting token's, or one under it "
                  "(`<identity>/<name>`). Default: the minting token's.")
    expires_in = serializers.IntegerField(
        min_value=1, max_value=NARROWED_MAX_SECONDS, default=NARROWED_DEFAULT_SECONDS,
        help_text=f"Seconds until it expires (default {NARROWED_DEFAULT_SECONDS}, at most {NARROWED_MAX_SECONDS}).")


class NarrowOutSerializer(serializers.Serializer[dict[str, Any]]):  # documents the body post() builds
    id = serializers.IntegerField()
    token = serializers.CharField(help_text="The secret: shown this once, stored only as its SHA-256.")
    prefix = serializers.CharField()
    end_user = serializers.CharField()
    session = serializers.IntegerField(allow_null=True)
    agent = serializers.CharField()
    expires_at = serializers.DateTimeField()


class NarrowTokenApi(AgentApiView):
    # Admitted so that a narrowed caller hears why it cannot mint (narrowed_token_cannot_mint), not only that the
    # operation is closed to it.
    narrowed_token_allowed = True
    # The reply holds a secret, which is stored nowhere but as its SHA-256: so it is not kept under an
    # Idempotency-Key either (the middleware leaves the key to this view, which records nothing). A retry mints
    # another token; the first expires unused.
    claims_idempotency_key = True

    @extend_schema(
        tags=["tokens"], operation_id="tokens_narrow", request=NarrowInSerializer,
        responses={201: NarrowOutSerializer},
        description="Mint a token narrowed to one end user (and optionally one session and one agent identity). "
                    "With it, memory is confined to `user:<end_user>`, the sessions' scopes of that user's "
                    "sessions, the project scope and its own `agent` scope (the last two read-only unless the "
                    "scope's write policy lets end-user tokens write), and sessions to those tagged with that "
                    "user; every other operation answers 403 `narrowed_token_scope`. It expires (default 15 "
                    "minutes, at most an hour), cannot mint (403 `narrowed_token_cannot_mint`) and is refused "
                    "once the token that minted it is revoked or expired. The minting is audited. An Idempotency-Key "
                    "is not recorded (the reply holds the secret): a retry mints another token.",
    )
    def post(self, request: Request) -> Response:
        data = NarrowInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        principal = request.user
        if not isinstance(principal, AgentPrincipal):  # AgentApiAccess refused other writers already
            raise Forbidden("Only agent tokens mint narrowed tokens.", code="agent_token_required")
        if principal.token.parent_id is not None:
            raise Forbidden("A narrowed token cannot mint another.", code="narrowed_token_cannot_mint")
        end_user = given["end_user"].strip()
        session_id = given["session"]
        if session_id is not None:
            session = selectors.session_get(project_ids=scope(request), session_id=session_id)
            if session.end_user != end_user:
                raise ValidationFailed("The session is not tagged with this end user (a session's end_user is "
                                       "set when it is created).", code="session_not_of_end_user")
        agent_project(request)
        token, secret = narrowed_token_mint(parent=principal.token, end_user=end_user, session_id=session_id,
                                            agent=given["agent"], expires_in=given["expires_in"])
        body = {"id": token.pk, "token": secret, "prefix": token.prefix, "end_user": token.end_user,
                "session": token.scope_session_id, "agent": token.agent_key, "expires_at": token.expires_at}
        return Response(NarrowOutSerializer(body).data, status=status.HTTP_201_CREATED)
