"""How a live page (the inbox, the overview's counts, a run's page) asks whether it is out of date: the URL its
poll calls and how often (runs_app.views.live answers it)."""

from dataclasses import dataclass

from django.http import QueryDict


@dataclass(frozen=True)
class LivePoll:
    """`url` carries the page's own query (its filters and window), the partial it re-renders (`part`, if any)
    and `since`, the version the page was drawn with; `seconds` is HARNESS_CONSOLE_POLL_SECONDS."""

    url: str
    seconds: int
    version: str


def live_poll(path: str, query: QueryDict, *, version: str, seconds: int, part: str = "") -> LivePoll:
    params = query.copy()
    for key in ("part", "since"):
        params.pop(key, None)
    if part:
        params["part"] = part
    params["since"] = version
    return LivePoll(url=f"{path}?{params.urlencode()}", seconds=seconds, version=version)
