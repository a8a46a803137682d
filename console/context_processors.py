"""The console's counts (navigation badge, overview tiles), each one owned by the app it counts.

Templates read `counts.<name>`. A count is computed the first time a template of the request reads
it and kept for the rest of the request, so a page or an htmx fragment that shows no count costs no
query, and the navigation's badge costs one however often the page shows it. To add a count, write a
function `(project_ids) -> int` in the app that owns the rows and name it in COUNTS.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence

from django.conf import settings
from django.http import HttpRequest

from harness.http.context import context_of
from harness.http.views import project_ids
from harness.tenancy import Role, role_project_ids
from memory_app import console_counts as memory_counts
from runs_app import console_counts as runs_counts

COUNTS: dict[str, Callable[[Sequence[int]], int]] = {
    "approvals_waiting": runs_counts.pending_approvals,  # every approval /approvals/ lists (issue 32)
    "pending_approvals": runs_counts.pending_approvals,  # those the user may decide: the badge
    "pending_questions": runs_counts.pending_questions,  # questions the user may answer (issue 33)
    "blocked_runs": runs_counts.blocked_runs,
    "held_memory": memory_counts.held_records,
}

# A count of work waiting for a role covers only the projects where the user holds it (issue 17): a reviewer in
# project A who only reads in project B is not told of B's approvals as if they were theirs to decide. The same
# approvals over every visible project are `approvals_waiting`, the number the inbox lists, so the overview and
# the inbox agree for every role that sees them (issue 32: an operator's overview said 0, its inbox 1).
COUNT_ROLES: dict[str, str] = {"pending_approvals": Role.REVIEWER, "pending_questions": Role.REVIEWER}


class Counts(Mapping[str, int]):
    """COUNTS over the projects the request's user may see (or acts in, COUNT_ROLES), each computed on first
    read."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._values: dict[str, int] = {}

    def __getitem__(self, name: str) -> int:
        if name not in self._values:
            ids = project_ids(self._request)
            if name in COUNT_ROLES:
                ids = role_project_ids(self._request.user, COUNT_ROLES[name], ids)
            self._values[name] = COUNTS[name](ids)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COUNTS)

    def __len__(self) -> int:
        return len(COUNTS)


def console_counts(request: HttpRequest) -> dict[str, Counts]:
    context = context_of(request)  # once per request, whatever renders it (harness.http.context)
    if context.console_counts is None:
        context.console_counts = Counts(request)
    counts: Counts = context.console_counts
    return {"counts": counts}


def console_push(request: HttpRequest) -> dict[str, str]:
    """The push's origin: the live pages listen to it when set (static/js/push.js, base.html's data-push-url)."""
    return {"push_url": settings.HARNESS_PUSH_URL}
