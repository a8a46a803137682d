"""The console's live pages: the inbox, the overview's counts and a run's page redraw themselves when something
they show changed, by polling the same partials they are drawn from.

Why polling and not server-sent events: the console is served by gunicorn's sync workers (config/gunicorn_conf.py),
where every open SSE stream would hold a worker for as long as the page is open; a handful of reviewers would
take every worker. A poll holds a worker for a few milliseconds, and an unchanged one costs one cheap statement
(runs_app.selectors.live): the page sends the version it was drawn with (`since`) and is answered 204, which htmx
swaps nothing for. Only a changed page is rendered again. The cost per open page is pinned in
tests/console/test_live_pages.py and written down in docs/operations/scaling.md.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from runs_app.presentation.live import LivePoll, live_poll


def unchanged(request: HttpRequest, version: str) -> HttpResponse | None:
    """204 No Content when the poll's `since` is the current version: the page is up to date. Only to htmx's
    poll: a person opening a URL that carries `since` gets the page."""
    if getattr(request, "htmx", False) and request.GET.get("since") == version:
        return HttpResponse(status=204)
    return None


def poll_of(request: HttpRequest, version: str, *, part: str = "", path: str = "") -> LivePoll:
    """What the page's polling element calls (the page's own URL unless `path` names it, as a POST answering with
    the page does), every HARNESS_CONSOLE_POLL_SECONDS."""
    return live_poll(path or request.path, request.GET, version=version, seconds=settings.HARNESS_CONSOLE_POLL_SECONDS,
                     part=part)
