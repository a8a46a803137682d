"""CPU per agent request in the Django process, by middleware chain: the full one and the API's (issue 14).

    DATABASE_URL=... .venv/bin/python bench/cpu_per_request.py [--requests 2000]

Builds keyed appends (`POST /api/v1/sessions/{id}/items/`, a ~1 KB item, a fresh Idempotency-Key, a real
agent token) as WSGI requests and hands each to `harness.wsgi.application` through one chain or the other,
taking turns, in this one process (no HTTP server, no client). Prints the CPU time (process time: the
database's own work is not in it) per request for each chain. The numbers depend on the machine; the
difference between the two lines is what the shorter chain saves.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "harness.settings")
# Plain-HTTP requests, as on loopback: with DEBUG off the settings would otherwise redirect them to https.
os.environ.setdefault("SECURE_COOKIES", "0")
# A rate no run reaches: the throttle counts (its cost is measured) but never refuses.
os.environ.setdefault("HARNESS_API_RATE", "100000000/min")

import django  # noqa: E402

django.setup()

from django.core.handlers.wsgi import WSGIHandler, WSGIRequest  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import close_old_connections  # noqa: E402

from harness.models import Project  # noqa: E402
from harness.wsgi import application  # noqa: E402
from sessions_app.services import session_create  # noqa: E402

BODY = json.dumps({"items": [{"role": "user", "content": {"text": "x" * 1000}}]}).encode()


def _request(path: str, token: str) -> WSGIRequest:
    return WSGIRequest({
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(BODY),
        "CONTENT_LENGTH": str(len(BODY)), "CONTENT_TYPE": "application/json",
        "HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_IDEMPOTENCY_KEY": uuid.uuid4().hex,
    })


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    project = Project.objects.get_or_create(slug="bench-cpu", defaults={"name": "Bench CPU"})[0]
    out = io.StringIO()
    call_command("create_agent_token", project=project.slug, name=f"cpu-{uuid.uuid4().hex[:6]}", stdout=out,
                 stderr=io.StringIO())
    token = out.getvalue().strip().splitlines()[-1]
    path = f"/api/v1/sessions/{session_create(project=project, role='writer', memory_policy='session').pk}/items/"
    chains = {"full chain (settings.MIDDLEWARE)": lambda r: WSGIHandler.get_response(application, r),
              "API chain (settings.API_MIDDLEWARE)": application.api_chain.get_response}
    cpu = dict.fromkeys(chains, 0.0)
    close_old_connections()
    for serve in chains.values():  # warm both
        for _ in range(50):
            serve(_request(path, token))
    rounds = 10
    for _ in range(rounds):
        for name, serve in chains.items():
            requests = [_request(path, token) for _ in range(args.requests // rounds)]
            start = time.process_time()
            for request in requests:
                response = serve(request)
                if response.status_code != 201:
                    sys.exit(f"{name}: {response.status_code} {response.getvalue()[:200]!r}")
            cpu[name] += time.process_time() - start
    for name, seconds in cpu.items():
        print(f"{name:40s} {1000 * seconds / args.requests:.3f} ms of CPU per keyed append")


if __name__ == "__main__":
    main()
