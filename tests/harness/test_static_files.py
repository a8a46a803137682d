"""With DEBUG off (as in production and in this suite) the app itself serves its static files."""

import pytest
from django.conf import settings


@pytest.mark.django_db
@pytest.mark.parametrize("path", [
    "/static/vendor/htmx-2.0.11.min.js",
    "/static/css/console.css",
    "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
])
def test_static_assets_are_served_without_debug(client, path):
    assert settings.DEBUG is False
    response = client.get(path)
    assert response.status_code == 200
    assert b"".join(response.streaming_content if response.streaming else [response.content])
