"""Export a run as one hash-checked bundle through the API and print its summary, or import one (read-only).

A bundle (docs/operations/run-bundles.md) carries a run's checkpoints with their lineage, events, items,
approvals with their decisions, effects with their receipts, the memory it read and the audit entries about it,
under a SHA-256 digest. Exporting and importing are an operator's or an admin's: HARNESS_TOKEN is a *personal*
token (agent tokens are refused 403 `not_an_operator`).

Run it against `bin/start`'s server (http://127.0.0.1:8000, demo project `novelforge`):

    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(DEBUG=1 .venv/bin/python manage.py create_personal_token admin | tail -1)
    .venv/bin/python examples/run_bundle.py                               # export R-101, print its summary
    .venv/bin/python examples/run_bundle.py export --run R-101 --project novelforge -o r101.bundle.json
    .venv/bin/python examples/run_bundle.py import r101.bundle.json --project novelforge-copy

The import prints the imported run's page: it says "Imported from <source> at <time>" and refuses every write
(409 `imported_read_only`) but a fork of one of its checkpoints.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


def call(method: str, path: str, body: Any = None) -> Any:
    url = os.environ.get("HARNESS_URL", "http://127.0.0.1:8000").rstrip("/") + path
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={  # noqa: S310 - http(s) only
        "Authorization": f"Bearer {os.environ['HARNESS_TOKEN']}", "Content-Type": "application/json",
        "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the console's own URL
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        error = json.loads(exc.read() or b"{}")
        sys.exit(f"{method} {path}: {exc.code} {error.get('code')}: {error.get('detail')}")


def find_run(run: str, project: str) -> int:
    """A run by its id (digits) or its ref (R-101) in `project`: the runs list, page by page."""
    if run.isdigit():
        return int(run)
    path: str | None = "/api/v1/runs/"
    while path:
        found = call("GET", path)
        for row in found["results"]:
            if row.get("ref") == run and row.get("project") == project:
                return int(row["id"])
        following = found.get("next")
        path = urllib.parse.urlsplit(following)._replace(scheme="", netloc="").geturl() if following else None
    sys.exit(f"no run {run} in {project}")


def summary(bundle: dict[str, Any]) -> str:
    manifest = bundle["manifest"]
    counts = ", ".join(f"{kind} {n}" for kind, n in manifest["counts"].items() if n)
    return (f"bundle {bundle['format']} v{bundle['version']} of {manifest['kind']} {manifest['root']} from "
            f"{manifest['source']['instance']}/{manifest['source']['project']}\n"
            f"exported {manifest['exported_at']} by {manifest['exported_by']}\n"
            f"records: {counts}\n"
            f"digest: {bundle['digest']}")


def export(run: str, output: str | None, kind: str, project: str = "novelforge") -> None:
    root = find_run(run, project) if kind == "run" else int(run)
    bundle = call("POST", "/api/v1/bundles/export/", {"kind": kind, "id": root})
    if output:
        data = json.dumps(bundle, sort_keys=True, separators=(",", ":")).encode()
        with open(output, "wb") as handle:
            handle.write(gzip.compress(data) if output.endswith(".gz") else data)
    print(summary(bundle))


def import_(path: str, project: str) -> None:
    with open(path, "rb") as handle:
        raw = handle.read()
    bundle = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    print(summary(bundle))
    done = call("POST", "/api/v1/bundles/import/", {"project": project, "bundle": bundle})
    root = done["root"]
    base = os.environ.get("HARNESS_URL", "http://127.0.0.1:8000").rstrip("/")
    page = {"run": "runs", "session": "sessions", "task": "tasks"}[root["kind"]]
    print(f"imported into {done['project']}: {root['kind']} {root['id']} (was {root['source_id']}), read-only")
    print(f"{base}/{page}/{root['id']}/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    out = commands.add_parser("export", help="export a run (or --session / --task) and print its summary")
    out.add_argument("--run", default="R-101", help="a run's id or ref (default R-101, the demo's)")
    out.add_argument("--kind", choices=("run", "session", "task"), default="run",
                     help="export a session or a task by id instead")
    out.add_argument("--project", default="novelforge", help="the run's project (default novelforge, the demo)")
    out.add_argument("-o", "--output", help="write the bundle here (.gz: gzipped)")
    into = commands.add_parser("import", help="import a bundle read-only")
    into.add_argument("file")
    into.add_argument("--project", required=True, help="the target project's slug (an admin may name a new one)")
    args = parser.parse_args()
    if args.command == "import":
        import_(args.file, args.project)
    elif args.command == "export":
        export(args.run, args.output, args.kind, args.project)
    else:
        export("R-101", None, "run")


if __name__ == "__main__":
    main()
