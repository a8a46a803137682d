"""The bundle's format (version 1): one JSON document, its digest, and the checks an import makes first.

    {"format": "harness-bundle", "version": 1,
     "manifest": {"kind", "root", "source", "exported_at", "exported_by", "counts", "digests", "lineage_cut"},
     "records": {"sessions": [...], "tasks": [...], "runs": [...], ...},   each list in ascending source id
     "digest": SHA-256 of the canonical JSON (harness.canonical) of {"format", "version", "manifest", "records"}}

The manifest repeats each kind's count and the SHA-256 of its list, so a record dropped, added, changed or moved is
named by kind even when the whole digest was recomputed. A digest is integrity, not authenticity: whoever can edit
the file can recompute every hash. Nothing here signs the bundle.
"""

import gzip
import json
from typing import Any

from harness.canonical import canonical_json, digest
from harness.http.errors import ValidationFailed

FORMAT = "harness-bundle"
VERSION = 1
# The kinds of records, in the order an import inserts them (each refers only to kinds before it, or to itself in
# ascending id: a checkpoint's parent; a run's pending approval and newest checkpoint, and a task's newest
# checkpoint, are set once those exist).
KINDS = ("sessions", "tasks", "runs", "items", "events", "approvals", "checkpoints", "node_executions", "effects",
         "questions", "snapshots", "memory", "audit")
ROOT_KINDS = ("run", "session", "task")
GZIP_MAGIC = b"\x1f\x8b"


class BundleRefused(ValidationFailed):
    """A bundle an import will not take, with what is wrong as its code (nothing was written)."""


def body_digest(bundle: dict[str, Any]) -> str:
    return digest({key: bundle.get(key) for key in ("format", "version", "manifest", "records")})


def seal(manifest: dict[str, Any], records: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The bundle of these records: counts and per-kind digests into the manifest, then the whole digest."""
    manifest = {**manifest, "counts": {k: len(records[k]) for k in KINDS},
                "digests": {k: digest(records[k]) for k in KINDS}}
    bundle: dict[str, Any] = {"format": FORMAT, "version": VERSION, "manifest": manifest, "records": records}
    bundle["digest"] = body_digest(bundle)
    return bundle


def dumps(bundle: dict[str, Any], *, compress: bool = False) -> bytes:
    text = canonical_json(bundle).encode()
    return gzip.compress(text, mtime=0) if compress else text


def loads(data: bytes | str) -> dict[str, Any]:
    """A bundle from its bytes, gzipped or not (400 `bundle_unreadable` if it is not a JSON object)."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        value = json.loads(raw)
    except (OSError, EOFError, ValueError) as exc:
        raise BundleRefused(f"The bundle is not readable JSON: {exc}", code="bundle_unreadable") from exc
    if not isinstance(value, dict):
        raise BundleRefused("A bundle is a JSON object.", code="bundle_unreadable")
    return value


def verify(bundle: Any) -> dict[str, Any]:
    """Check the bundle before anything is written; the first failing check refuses it (400) with its code.

    1. `format` is harness-bundle (`bundle_format_unknown`) and `version` one this instance reads
       (`bundle_version_unsupported`).
    2. `digest` is the SHA-256 of the rest (`bundle_digest_mismatch`).
    3. Every kind is there, a list of objects (`bundle_malformed`), as many as the manifest counts
       (`bundle_records_missing`), with the digest the manifest gives (`bundle_records_changed`).
    4. Each kind's ids are unique and ascending (`bundle_records_out_of_order`).
    """
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise BundleRefused(f"This is not a {FORMAT} document.", code="bundle_format_unknown")
    if bundle.get("version") != VERSION:
        raise BundleRefused(f"Bundle version {bundle.get('version')!r} is not supported here (this instance reads "
                            f"version {VERSION}).", code="bundle_version_unsupported")
    if not isinstance(bundle.get("digest"), str) or bundle["digest"] != body_digest(bundle):
        raise BundleRefused("The bundle's digest does not match its content: it was changed or corrupted.",
                            code="bundle_digest_mismatch")
    manifest, records = bundle.get("manifest"), bundle.get("records")
    if (not isinstance(manifest, dict) or not isinstance(records, dict) or set(records) != set(KINDS)
            or manifest.get("kind") not in ROOT_KINDS or not isinstance(manifest.get("root"), int)
            or not isinstance(manifest.get("counts"), dict) or not isinstance(manifest.get("digests"), dict)):
        raise BundleRefused("The bundle's manifest or records are not in the version 1 shape.",
                            code="bundle_malformed")
    for kind in KINDS:
        rows = records[kind]
        if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), int) for r in rows):
            raise BundleRefused(f"records.{kind} is not a list of records with ids.", code="bundle_malformed")
        if len(rows) != manifest["counts"].get(kind):
            raise BundleRefused(f"records.{kind} has {len(rows)} records; the manifest counts "
                                f"{manifest['counts'].get(kind)}.", code="bundle_records_missing")
        if digest(rows) != manifest["digests"].get(kind):
            raise BundleRefused(f"records.{kind} does not match the manifest's digest of it.",
                                code="bundle_records_changed")
        ids = [r["id"] for r in rows]
        if ids != sorted(set(ids)):
            raise BundleRefused(f"records.{kind} is not in ascending id order (reordered or repeated).",
                                code="bundle_records_out_of_order")
    return bundle


def summary(bundle: dict[str, Any]) -> dict[str, Any]:
    manifest = bundle.get("manifest") or {}
    return {"format": bundle.get("format"), "version": bundle.get("version"), "digest": bundle.get("digest"),
            "kind": manifest.get("kind"), "root": manifest.get("root"), "source": manifest.get("source"),
            "exported_at": manifest.get("exported_at"), "exported_by": manifest.get("exported_by"),
            "counts": manifest.get("counts")}
