"""A URLconf for tests/harness/test_resolve_cache.py: the same API path, another view."""

from django.http import HttpRequest, HttpResponse
from django.urls import path


def _items(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse(str(pk))


urlpatterns = [path("api/v1/sessions/<int:pk>/items/", _items, name="only-items")]
