"""What the runs app's console pages share."""

from harness.http.views import ConsoleRequest


def query_without_page(request: ConsoleRequest) -> str:
    """The page's query string without its paging keys: what its filter and sort links carry on."""
    params = request.GET.copy()
    for key in ("page", "part", "after", "before"):
        params.pop(key, None)
    return params.urlencode()
