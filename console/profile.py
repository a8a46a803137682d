"""The profile page: a console user's own personal API tokens, made, listed, rotated and revoked here through
harness.tokens (the same services as `manage.py create_personal_token` and the admin's revoke action).

A new token's secret is in the answer to the POST that made it (the page, or its htmx fragment) and nowhere else:
not in the list, not on the next GET, not in a message stored in the session, not in the URL (so not in the
access log). That answer is never cached (no-store)."""

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.cache import add_never_cache_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.http.views import console_page, render_page
from harness.models import ApiToken
from harness.tokens import (
    PERSONAL_TOKEN_DEFAULT_DAYS,
    personal_token_create,
    personal_token_revoke,
    personal_token_rotate,
    personal_token_status,
    personal_tokens_of,
)


class TokenCreateForm(forms.Form):
    EXPIRY_CHOICES = [(7, "7 days"), (30, "30 days"), (90, "90 days"), (365, "1 year")]

    name = forms.CharField(max_length=120, widget=forms.TextInput(attrs={"placeholder": "what it is for"}))
    expires_in_days = forms.TypedChoiceField(choices=EXPIRY_CHOICES, coerce=int, initial=PERSONAL_TOKEN_DEFAULT_DAYS,
                                             label="Expires after")


def _page(request: HttpRequest, *, shown: tuple[ApiToken, str] | None = None, form: TokenCreateForm | None = None,
          status: int = 200) -> HttpResponse:
    rows = [(token, personal_token_status(token)) for token in personal_tokens_of(request.user)]  # type: ignore[arg-type]
    context: dict[str, Any] = {"rows": rows, "form": form or TokenCreateForm(),
                               "shown": {"token": shown[0], "secret": shown[1]} if shown else None}
    response = render_page(request, "console/profile.html", context, partials=("tokens",),
                           part="tokens" if request.method == "POST" else None, status=status)
    add_never_cache_headers(response)
    return response


@require_GET
@console_page
@never_cache
def profile(request: HttpRequest) -> HttpResponse:
    return _page(request)


@require_POST
@console_page
def token_create(request: HttpRequest) -> HttpResponse:
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    try:
        shown = personal_token_create(user=request.user, actor=Actor.of(request.user),  # type: ignore[arg-type]
                                      name=form.cleaned_data["name"],
                                      expires_in_days=form.cleaned_data["expires_in_days"])
    except DomainError as exc:
        form.add_error(None, exc.detail)
        return _page(request, form=form, status=exc.http_status)
    return _page(request, shown=shown, status=201)


@require_POST
@console_page
def token_rotate(request: HttpRequest, token_id: int) -> HttpResponse:
    # Another user's token, or no token: NotFoundError, the 404 page (as if it did not exist).
    try:
        shown = personal_token_rotate(user=request.user, actor=Actor.of(request.user),  # type: ignore[arg-type]
                                      token_id=token_id)
    except DomainError as exc:
        if exc.http_status == 404:
            raise
        messages.error(request, exc.detail)
        return redirect("profile")
    return _page(request, shown=shown)


@require_POST
@console_page
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = personal_token_revoke(user=request.user, actor=Actor.of(request.user),  # type: ignore[arg-type]
                                  token_id=token_id)
    if getattr(request, "htmx", False):
        return _page(request)
    messages.success(request, f"Token {token.name} ({token.prefix}…) is revoked.")
    return redirect("profile")
