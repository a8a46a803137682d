"""Artifact fingerprints: what a checkpoint records about a task's artifacts, for a resume to verify."""

from typing import Any

from harness.canonical import digest


def bare_fingerprint(value: Any) -> Any:
    """A fingerprint as bare hex: clients and the demo write `sha256:<hex>`, this module bare hex; one value
    either way, so every comparison of fingerprints goes through here. Anything but a string is returned as is."""
    return value.removeprefix("sha256:") if isinstance(value, str) else value


def artifact_fingerprint(value: Any) -> str:
    """An artifact's fingerprint, as bare hex.

    A ref that carries its own `sha256`, or is a string (a content address such as "sha256:<hex>",
    or a path@version), is its own identity; any other ref is identified by its canonical digest.
    """
    if isinstance(value, dict) and isinstance(value.get("sha256"), str):
        value = value["sha256"]
    if isinstance(value, str):
        return str(bare_fingerprint(value))
    return digest(value)


def artifact_fingerprints(artifact_refs: dict[str, Any] | None) -> dict[str, str]:
    """What a checkpoint records about the task's artifacts, for the resume to verify."""
    return {name: artifact_fingerprint(value) for name, value in sorted((artifact_refs or {}).items())}
