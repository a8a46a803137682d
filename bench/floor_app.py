"""The floor under any HTTP checkpoint write on this machine: a bare WSGI application (no Django, no
authentication, no validation) that stores each POSTed body with one autocommit INSERT and answers 201.

Served by the same server, with the same workers, to the same clients as the harness API in scenario H3. No
HTTP service that writes one row per request can be faster here, so if this floor is below a target's ops/s
the target cannot be met on this machine by any cut to our code (see bench/README.md).
"""

from __future__ import annotations

import os
from typing import Any

import psycopg

_conn: psycopg.Connection | None = None


def _connection() -> psycopg.Connection:
    global _conn  # one connection per worker process, as the API's persistent connections
    if _conn is None or _conn.closed:
        _conn = psycopg.connect(os.environ["BENCH_FLOOR_DATABASE_URL"], autocommit=True)
        _conn.execute("CREATE TABLE IF NOT EXISTS bench_http_floor (id bigserial PRIMARY KEY, body jsonb NOT NULL)")
    return _conn


def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["REQUEST_METHOD"] != "POST":
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
        return [b"{}"]
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    sql = "INSERT INTO bench_http_floor (body) VALUES (%s::jsonb) RETURNING id"
    row = _connection().execute(sql, (body.decode(),)).fetchone()
    answer = b'{"id": %d}' % row[0]  # type: ignore[index]
    start_response("201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
    return [answer]
