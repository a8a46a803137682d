"""An API path's URL match is kept per resolver (harness.http.handlers.resolve_path): the same answer as resolving it,
made once per path, dropped with the URLconf, bounded."""

import pytest
from django.test import override_settings
from django.urls import Resolver404, clear_url_caches, get_resolver

from harness.http import handlers


def test_an_api_paths_match_is_the_resolvers_own_and_made_once() -> None:
    path = "/api/v1/sessions/41/items/"
    first = handlers.resolve_path(None, path)
    fresh = get_resolver().resolve(path)
    assert (first.func, first.kwargs, first.route, first.url_name) == (fresh.func, fresh.kwargs, fresh.route,
                                                                       fresh.url_name)
    assert handlers.resolve_path(None, path) is first
    other = handlers.resolve_path(None, "/api/v1/sessions/42/items/")
    assert other is not first and other.kwargs == {"pk": 42}


def test_pages_and_unknown_paths_are_not_kept() -> None:
    assert handlers.resolve_path(None, "/runs/") is not handlers.resolve_path(None, "/runs/")
    with pytest.raises(Resolver404):
        handlers.resolve_path(None, "/api/v1/no-such-thing/")
    kept = getattr(get_resolver(), handlers._MATCHES_ATTR, {})
    assert "/api/v1/no-such-thing/" not in kept and "/runs/" not in kept


def test_another_urlconf_gets_its_own_matches() -> None:
    path = "/api/v1/sessions/7/items/"
    ours = handlers.resolve_path(None, path)
    with override_settings(ROOT_URLCONF="tests.harness.urls_api_only"):
        theirs = handlers.resolve_path(None, path)
        assert theirs.func is not ours.func and theirs.url_name == "only-items"
    clear_url_caches()
    assert handlers.resolve_path(None, path).func == ours.func


def test_a_process_that_saw_too_many_paths_forgets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "_MATCHES_MAX", 3)
    clear_url_caches()
    for pk in range(1, 4):
        handlers.resolve_path(None, f"/api/v1/sessions/{pk}/items/")
    assert len(getattr(get_resolver(), handlers._MATCHES_ATTR)) == 3
    handlers.resolve_path(None, "/api/v1/sessions/4/items/")
    assert list(getattr(get_resolver(), handlers._MATCHES_ATTR)) == ["/api/v1/sessions/4/items/"]
