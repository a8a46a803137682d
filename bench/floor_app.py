"""The floors under any HTTP write and read of agent state on this machine: a bare WSGI application (no Django, no
authentication, no validation, no idempotency, no metrics or log) doing the least such a call must do.

- the write floor (POST, any path): stores each POSTed body with one autocommit INSERT and answers 201, as the
  harness API's append (H1) and checkpoint write (H3) are measured against it;
- the read floor (GET /latest): one indexed SELECT of the newest 50 of a 10,000-row table of ~1 KB JSON values
  (`read_fixture` fills it), PostgreSQL writing the answer's JSON text, sent as it comes (as the harness's own
  newest-items read does, harness.db.fetch_json_text), as the newest-50 read (H2) is measured against it.

Served by the same server, with the same workers, to the same clients as the harness API in scenario H. No HTTP
service that writes one row per request, or reads 50, can be faster here, so if a floor is below a target's ops/s
the target cannot be met on this machine by any cut to our code (see bench/README.md).
"""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg.adapt import Loader

_conn: psycopg.Connection | None = None

READ_ROWS = 10_000
# The read: the newest 50 by the primary key's order, oldest first, as one JSON array PostgreSQL writes (text, so
# its bytes loader hands it over as PostgreSQL sent it, unparsed).
READ_SQL = """
SELECT coalesce(json_agg(json_build_object('seq', r.seq, 'content', r.content) ORDER BY r.seq), '[]')::text
  FROM (SELECT seq, content FROM bench_http_read_floor WHERE sid = 1 ORDER BY seq DESC LIMIT 50) r"""


class _TextAsBytes(Loader):
    def load(self, data: Any) -> bytes:
        return bytes(data)


def _connection() -> psycopg.Connection:
    global _conn  # one connection per worker process, as the API's persistent connections
    if _conn is None or _conn.closed:
        _conn = psycopg.connect(os.environ["BENCH_FLOOR_DATABASE_URL"], autocommit=True)
        _conn.adapters.register_loader("text", _TextAsBytes)  # the read's JSON text, sent as the bytes that came
        _conn.execute("CREATE TABLE IF NOT EXISTS bench_http_floor (id bigserial PRIMARY KEY, body jsonb NOT NULL)")
    return _conn


def read_fixture(url: str, content: str) -> None:
    """The read floor's table: READ_ROWS rows of `content` (a ~1 KB JSON text) under one key, as a session's items
    are (json, keyed by (session, seq)); made once, kept while it holds that many rows."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_http_read_floor (sid bigint NOT NULL, seq bigint NOT NULL, "
                     "content json NOT NULL, PRIMARY KEY (sid, seq))")
        row = conn.execute("SELECT count(*) FROM bench_http_read_floor WHERE sid = 1").fetchone()
        if row is not None and row[0] == READ_ROWS:
            return
        conn.execute("DELETE FROM bench_http_read_floor")
        conn.execute("INSERT INTO bench_http_read_floor (sid, seq, content) "
                     "SELECT 1, n, %s::json FROM generate_series(1, %s) AS n", (content, READ_ROWS))
        conn.execute("ANALYZE bench_http_read_floor")


def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["REQUEST_METHOD"] != "POST":
        if environ.get("PATH_INFO") == "/latest":
            row = _connection().execute(READ_SQL).fetchone()
            answer: bytes = row[0]  # type: ignore[index]
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
            return [answer]
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
        return [b"{}"]
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    sql = "INSERT INTO bench_http_floor (body) VALUES (%s::jsonb) RETURNING id"
    row = _connection().execute(sql, (body.decode(),)).fetchone()
    answer = b'{"id": %d}' % row[0]  # type: ignore[index]
    start_response("201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
    return [answer]
