"""Call the WSGI application as a server does (config.wsgi: its three chains), not through the test Client."""

import io
import json
from typing import Any
from wsgiref.util import setup_testing_defaults

from config.wsgi import application


def call(method: str, path: str, *, body: Any = None, host: str = "testserver", **headers: str
         ) -> tuple[int, dict[str, str], bytes]:
    raw = b"" if body is None else json.dumps(body).encode()
    environ: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "wsgi.input": io.BytesIO(raw),
                               "CONTENT_LENGTH": str(len(raw)), "CONTENT_TYPE": "application/json",
                               "HTTP_HOST": host, **headers}
    setup_testing_defaults(environ)
    answer: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), dict(response_headers)

    content = b"".join(application(environ, start_response))
    return answer["status"], answer["headers"], content
