"""Tools' declared argument schemas (issue 32): what makes a JSON Schema acceptable as one, and the check of an
action's arguments against one. Pure functions: the registry's service, the approval request, the console's edit
and the resume worker (worker.checks) all call these, so every door refuses the same arguments for the same reason.
"""

from dataclasses import dataclass
from typing import Any

from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators
from referencing.exceptions import Unresolvable

from harness.http.errors import ValidationFailed

# The code of a refused action (the approval request, an edit, the resume's trace): machine-readable, beside the
# field it names.
ARGUMENTS_INVALID = "arguments_invalid"
SCHEMA_INVALID = "schema_invalid"


@dataclass(frozen=True)
class ArgumentError:
    field: str  # the argument it is about ("chapter", "address.city"), "" for the arguments as a whole
    message: str


def schema_problem(schema: Any) -> str:
    """Why `schema` cannot be a tool's argument schema ("" when it can): a JSON Schema (its own metaschema's
    rules, draft 2020-12 unless it names another in `$schema`) describing a JSON object."""
    if not isinstance(schema, dict):
        return "A tool's schema is a JSON object (a JSON Schema)."
    if not isinstance(schema.get("$schema", ""), str):
        return 'A schema\'s "$schema" is the URI of its dialect.'
    declared = schema.get("type")
    if declared is not None and declared != "object":
        return 'A tool\'s arguments are a JSON object: the schema\'s "type" is "object".'
    validator = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema_exceptions.SchemaError as exc:
        where = "/".join(str(part) for part in exc.path)
        return f"Not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
    return ""


def argument_errors(schema: dict[str, Any], arguments: Any) -> list[ArgumentError]:
    """Every way `arguments` breaks `schema`, each naming the argument it is about, in a stable order."""
    validator = validators.validator_for(schema, default=validators.Draft202012Validator)(schema)
    try:
        found = [_error(e) for e in validator.iter_errors(arguments)]
    except Unresolvable as exc:  # a $ref to a document it does not hold: nothing is fetched, nothing passes
        return [ArgumentError("", f"The schema cannot be applied: {exc}")]
    return sorted(found, key=lambda e: (e.field, e.message))


def _error(error: jsonschema_exceptions.ValidationError) -> ArgumentError:
    path = [str(part) for part in error.absolute_path]
    # A missing or unexpected key is about that key, not about the object that holds it.
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        if missing:
            path.append(str(missing[0]))
            return ArgumentError(".".join(path), "This argument is required.")
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = set((error.schema.get("properties") or {}) if isinstance(error.schema, dict) else ())
        extra = sorted(str(key) for key in error.instance if key not in known)
        if extra:
            path.append(extra[0])
            return ArgumentError(".".join(path), "The tool's schema has no such argument.")
    return ArgumentError(".".join(path), error.message)


def check_arguments(schema: dict[str, Any], arguments: Any, *, version: int, tool: str) -> None:
    """Raise ValidationFailed (400 `arguments_invalid`, naming the first failing `field` and listing every
    `errors` entry) when `arguments` do not match `schema`, version `version` of `tool`'s schema."""
    errors = argument_errors(schema, arguments)
    if errors:
        first = errors[0]
        raise ValidationFailed(
            f"The arguments do not match {tool}'s schema (version {version}): "
            f"{first.field or 'the arguments'}: {first.message}",
            code=ARGUMENTS_INVALID, field=first.field, schema_version=version,
            errors=[{"field": e.field, "message": e.message} for e in errors])
