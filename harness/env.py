"""Every environment variable the project reads, declared once, and the typed readers that read them.

A declaration (EnvVar) says what a variable is: its kind, its default, one line of documentation, the
configuration page's section it belongs to and who reads it. The readers take the default (and an int's minimum)
from it, so a default lives in one place; reading a name that is not declared raises UndeclaredVariable, a
programming error the suite catches (tests/harness/test_env_declarations.py also scans the code and bin/* for every
name read, both ways). docs/operations/configuration.md carries the table generated from the declarations:
`python -m harness.env --write` rewrites it after a declaration changes.

Each reader fails loudly (ImproperlyConfigured) on a value it cannot parse: a typo in production configuration
should stop the process at start-up, not change behaviour silently.
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

Kind = Literal["str", "bool", "int", "list", "json", "secret"]
T = TypeVar("T")


class UndeclaredVariable(LookupError):
    """A reader was asked for a name harness/env.py does not declare, or as another kind: a bug, not configuration."""


@dataclass(frozen=True)
class Derived:
    """A default computed from other settings when it is read (the reader passes it as derived=); `text` is what
    the configuration page says it is."""

    text: str


@dataclass(frozen=True)
class EnvVar:
    name: str
    kind: Kind
    # None: required (str and secret only). A json default is JSON text; a list's is a tuple (a frozen value).
    default: str | bool | int | tuple[str, ...] | Derived | None
    doc: str
    section: str
    # Who reads it, as paths from the repository root (a folder ends in "/"); the test holds these to the code.
    read_by: tuple[str, ...] = ("config/settings.py",)
    minimum: int | None = None

    @property
    def secret(self) -> bool:
        """A secret is read by env_secret: from NAME, or from the file NAME_FILE names."""
        return self.kind == "secret"


# The configuration page's sections, in its order: the title, and the pages that describe them at length.
SECTIONS: dict[str, tuple[str, str]] = {
    "process": ("The process", "[Production](production.md)"),
    "database": ("Database", "[Production](production.md), [Scaling](scaling.md)"),
    "broker": ("Broker and cache", "[Production](production.md), [Scaling](scaling.md)"),
    "https": ("HTTPS and cookies", "[Production](production.md), [Security model](security.md)"),
    "requests": ("Requests and rates", "[Security model](security.md), [REST API](../agents/rest-api.md)"),
    "worker": ("The resume worker, tools and node handlers",
               "[The resume](../concepts/resume.md), [Tools and node handlers](tools.md)"),
    "notify": ("Webhooks and email", "[Webhooks](../agents/webhooks.md)"),
    "observability": ("Logs, metrics and traces", "[Metrics, logs and traces](observability.md)"),
    "serve": ("Processes: bin/serve, bin/start, bin/setup", "[Production](production.md)"),
    "client": ("The agent client and the examples", "[Python client](../agents/python-client.md)"),
}

_SETTINGS = "config/settings.py"
_SERVE = "bin/serve"
_START = "bin/start"
_EXAMPLE = "bin/example"
_ENTRY_POINTS = ("manage.py", "config/wsgi.py", "config/asgi.py", "config/celery.py")
_CORES = Derived("the number of cores")

_VARIABLES = (
    # The process.
    EnvVar("DEBUG", "bool", False, "Django's debug mode: local development only (bin/start turns it on).",
           "process", (_SETTINGS, _START, _EXAMPLE)),
    EnvVar("SECRET_KEY", "secret", "", "Django's signing key; required unless DEBUG is on.", "process"),
    EnvVar("ALLOWED_HOSTS", "list", Derived("`localhost,127.0.0.1,[::1]` with DEBUG, else none"),
           "The host names the console answers to, comma-separated.", "process"),
    EnvVar("CSRF_TRUSTED_ORIGINS", "list", (), "Origins trusted for the console's forms, e.g. "
           "`https://console.example.com`.", "process"),
    EnvVar("HARNESS_VAR_DIR", "str", Derived("`var/` in the project"),
           "Where the local PostgreSQL, the filesystem broker, static files and beat's schedule live.", "process",
           (_SETTINGS, "harness/ops/local_postgres.py", _SERVE, _START, _EXAMPLE)),
    EnvVar("HARNESS_DEMO", "bool", False, "Installs the demo app, its `publish_chapter` tool and its node handlers "
           "(bin/start sets it).", "process"),
    EnvVar("DJANGO_SETTINGS_MODULE", "str", "config.settings", "The settings module (the entry points' default).",
           "process", (*_ENTRY_POINTS, "harness/ops/distribution.py")),
    # Database.
    EnvVar("DATABASE_URL", "secret", "", "The PostgreSQL database (`postgres://...`); unset or empty, bin/start's "
           "embedded PostgreSQL under HARNESS_VAR_DIR.", "database", (_SETTINGS, _SERVE, _START)),
    EnvVar("DATABASE_REPLICA_URL", "secret", "", "A streaming replica for the console's heavy pages; unset, none.",
           "database"),
    EnvVar("HARNESS_REPLICA_PAGES", "list", ("run_inspector", "run_lineage", "task_lineage", "checkpoint_detail",
           "checkpoint_diff", "session_list", "session_timeline", "record_list"),
           "The console pages (URL names) that read the replica.", "database"),
    EnvVar("DATABASE_POOL_MAX_SIZE", "int", 0, "psycopg's connection pool per process, its size; 0 is no pool "
           "(persistent connections instead).", "database", minimum=0),
    EnvVar("DATABASE_CONN_MAX_AGE", "int", 60, "Seconds a connection is kept without a pool (Django's "
           "CONN_MAX_AGE).", "database", minimum=0),
    EnvVar("DATABASE_PREPARED_STATEMENTS", "bool", True, "The hot statements are prepared; 0 behind a pooler that "
           "cannot carry them (PgBouncer < 1.21 in transaction mode).", "database"),
    EnvVar("DATABASE_SERVER_SIDE_BINDING", "bool", False, "psycopg's server-side binding (measured slower: "
           "bench/README.md).", "database"),
    # Broker and cache.
    EnvVar("CELERY_BROKER_URL", "secret", "filesystem://", "Celery's broker: Redis (`redis://...`) in production; "
           "the filesystem transport under HARNESS_VAR_DIR locally.", "broker", (_SETTINGS, _SERVE)),
    EnvVar("CELERY_VISIBILITY_TIMEOUT", "int", 300, "Seconds before Redis redelivers a task no worker "
           "acknowledged.", "broker", minimum=10),
    EnvVar("CELERY_TASK_ALWAYS_EAGER", "bool", False, "Runs tasks in the calling process (tests only).", "broker"),
    EnvVar("CACHE_URL", "secret", "", "The throttles' Redis; unset, the broker's when it is Redis, else each "
           "process's memory.", "broker"),
    # HTTPS and cookies.
    EnvVar("SECURE_COOKIES", "bool", Derived("on unless DEBUG"), "Session and CSRF cookies only over HTTPS.",
           "https"),
    EnvVar("SECURE_SSL_REDIRECT", "bool", Derived("as SECURE_COOKIES"), "Redirects plain HTTP to HTTPS (not the "
           "probes nor /metrics).", "https"),
    EnvVar("SECURE_PROXY_SSL_HEADER", "bool", Derived("as SECURE_COOKIES"), "Trusts the proxy's X-Forwarded-Proto "
           "(the proxy must drop any the client sent).", "https"),
    EnvVar("SECURE_HSTS_SECONDS", "int", Derived("31536000 with SECURE_COOKIES, else 0"), "HSTS max-age.",
           "https", minimum=0),
    EnvVar("SECURE_HSTS_INCLUDE_SUBDOMAINS", "bool", True, "HSTS covers subdomains.", "https"),
    EnvVar("SECURE_HSTS_PRELOAD", "bool", False, "Asks for HSTS preloading, a promise about the whole domain "
           "(opt-in).", "https"),
    # Requests and rates.
    EnvVar("HARNESS_MAX_BODY_BYTES", "int", 1_048_576, "A larger request body is answered 413.", "requests",
           minimum=1024),
    EnvVar("HARNESS_MAX_JSON_DEPTH", "int", 32, "Deeper JSON is answered 400.", "requests", minimum=4),
    EnvVar("HARNESS_PLAIN_PATH", "bool", True, "The agent's hottest calls skip DRF's dispatch when plain; 0 sends "
           "every call through DRF.", "requests"),
    EnvVar("HARNESS_API_RATE", "str", "6000/min", "Each agent token's rate: `N/s`, `N/min`, `N/hour` or `off`; "
           "over it, 429.", "requests"),
    EnvVar("HARNESS_LOGIN_RATE", "str", "10/15min", "Failed console logins per client address and username "
           "before 429.", "requests"),
    EnvVar("HARNESS_CLIENT_IP_HEADER", "str", "", "The WSGI name of the proxy's client-address header (e.g. "
           "`HTTP_X_REAL_IP`); unset, REMOTE_ADDR.", "requests"),
    EnvVar("HARNESS_CONSOLE_POLL_SECONDS", "int", 5, "How often an open inbox, overview or run page asks whether "
           "anything changed (an unchanged answer is 204 after one statement: [Scaling](scaling.md)).", "requests",
           minimum=1),
    EnvVar("HARNESS_PUSH_URL", "str", "", "Where the push is (the `mcp` process's origin, e.g. "
           "`http://127.0.0.1:8001`) for the console's live pages, which then redraw when a change commits instead "
           "of at their next poll; unset, they poll (behind a proxy that routes `/push/` there: the console's own "
           "origin). Agents' clients read it too, for their waits (`push_url=`; `\"\"`: they poll; [Waiting for a "
           "decision](../agents/push.md)).", "requests", (_SETTINGS, _START, "client/")),
    EnvVar("HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS", "int", 5000, "How long a duplicate keyed POST waits for the "
           "first before 409 `idempotency_in_progress`.", "requests", minimum=1),
    # The resume worker, tools and node handlers.
    EnvVar("HARNESS_RECOVERY_INTERVAL_SECONDS", "int", 30, "How often beat runs the recovery pass.", "worker",
           minimum=1),
    EnvVar("HARNESS_WORKER_HEARTBEAT_SECONDS", "int", 15, "How often beat sends the worker's heartbeat.",
           "worker", minimum=1),
    EnvVar("HARNESS_WORKER_HEARTBEAT_MAX_AGE", "int", Derived("3 × HARNESS_WORKER_HEARTBEAT_SECONDS"),
           "/readyz is not ready when no worker has beaten for this many seconds.", "worker", minimum=1),
    EnvVar("HARNESS_STALE_RUN_GRACE", "int", 3600, "Seconds a running run may stay past its expired lease "
           "before the recovery pass blocks it as stale, for a project that sets no grace of its own.", "worker",
           minimum=1),
    EnvVar("HARNESS_WORKER_LEASE_SECONDS", "int", 60, "The worker's lease on a run, renewed while a call runs.",
           "worker", minimum=1),
    EnvVar("HARNESS_DEFAULT_LEASE_SECONDS", "int", 60, "An agent's lease on a run when its claim names none.",
           "worker", minimum=1),
    EnvVar("HARNESS_EFFECT_MAX_ATTEMPTS", "int", 5, "Sends of an effect to an unreachable tool before the run "
           "blocks.", "worker", minimum=1),
    EnvVar("HARNESS_RESUME_MAX_ATTEMPTS", "int", 10, "Unfinished resume attempts of one run before it blocks (a "
           "poison run).", "worker", minimum=1),
    EnvVar("HARNESS_FRAMEWORK_VERSION", "str", "1.0", "The version worker-driven plans run on; a resume refuses "
           "a checkpoint of another major.", "worker"),
    EnvVar("HARNESS_TOOL_ADAPTERS", "json", "{}", "Tool adapters by name, a JSON object merged over the default "
           "(null removes one).", "worker"),
    EnvVar("HARNESS_NODE_HANDLERS", "json", "{}", "Node handlers by node name, a JSON object merged over the "
           "default.", "worker"),
    # Webhooks and email.
    EnvVar("HARNESS_WEBHOOK_SWEEP_SECONDS", "int", 2, "How often beat sends the webhook deliveries that are due.",
           "notify", minimum=1),
    EnvVar("HARNESS_WEBHOOK_MAX_ATTEMPTS", "int", 8, "Attempts per webhook delivery.", "notify", minimum=1),
    EnvVar("HARNESS_WEBHOOK_BACKOFF_SECONDS", "int", 10, "The first retry's delay, doubling each time (capped at "
           "an hour).", "notify", minimum=0),
    EnvVar("HARNESS_WEBHOOK_TIMEOUT_SECONDS", "int", 10, "Each webhook POST's timeout.", "notify", minimum=1),
    EnvVar("HARNESS_WEBHOOK_ALLOW_PRIVATE", "bool", False, "Allows webhook and Slack URLs on loopback and private "
           "addresses (local development; bin/start sets it).", "notify", (_SETTINGS, _START)),
    EnvVar("HARNESS_CONSOLE_URL", "str", "", "The console's address, for links in emails and Slack messages.",
           "notify"),
    EnvVar("EMAIL_BACKEND", "str", "django.core.mail.backends.console.EmailBackend", "Django's email backend.",
           "notify"),
    EnvVar("DEFAULT_FROM_EMAIL", "str", "harness@localhost", "The sender of reviewer emails.", "notify"),
    EnvVar("EMAIL_HOST", "str", "localhost", "The SMTP server.", "notify"),
    EnvVar("EMAIL_PORT", "int", 25, "The SMTP server's port.", "notify", minimum=1),
    # Logs, metrics and traces.
    EnvVar("LOG_FORMAT", "str", Derived("`text` with DEBUG, else `json`"), "`json` (one object per line) or "
           "`text`.", "observability"),
    EnvVar("LOG_LEVEL", "str", "INFO", "The root logger's level.", "observability"),
    EnvVar("HARNESS_ACCESS_LOG", "bool", True, "One log line per request.", "observability"),
    EnvVar("HARNESS_METRICS_TOKEN", "secret", "", "The bearer token /metrics asks for; unset, /metrics is 404.",
           "observability"),
    EnvVar("PROMETHEUS_MULTIPROC_DIR", "str", "", "Where every process of a machine writes its metrics (bin/serve: "
           "`$HARNESS_VAR_DIR/prometheus`, emptied at start).", "observability",
           ("harness/ops/metrics.py", "config/gunicorn_conf.py", _SERVE)),
    EnvVar("OTEL_EXPORTER_OTLP_ENDPOINT", "str", "", "The OTLP/HTTP collector; set, requests, tasks and tool "
           "calls are traced (the other `OTEL_*` variables apply).", "observability", ("harness/ops/tracing.py",)),
    EnvVar("OTEL_SERVICE_NAME", "str", "harness-console", "The traces' service name.", "observability",
           ("harness/ops/tracing.py",)),
    # Processes: bin/serve, bin/start, bin/setup.
    EnvVar("HARNESS_ROLES", "list", ("web", "worker", "beat", "mcp"), "Which processes this machine runs; `beat` "
           "on exactly one machine.", "serve", (_SERVE,)),
    EnvVar("WEB_SERVER", "str", "gunicorn", "`gunicorn` (sync workers) or `granian`: a preset for WEB_CMD.",
           "serve", (_SERVE,)),
    EnvVar("WEB_CMD", "str", Derived("the WEB_SERVER preset"), "The whole web server command.", "serve",
           (_SERVE,)),
    EnvVar("BIND", "str", "127.0.0.1:8000", "Where the web server listens (the proxy's upstream).", "serve",
           (_SERVE,)),
    EnvVar("MCP_BIND", "str", Derived("BIND's host, its port + 1"), "Where the MCP server listens (the proxy's "
           "upstream for `/mcp`).", "serve", (_SERVE,)),
    EnvVar("WEB_WORKERS", "int", _CORES, "Web processes.", "serve", (_SERVE,)),
    EnvVar("WORKER_CONCURRENCY", "int", _CORES, "Resume worker processes (Celery's prefork pool).", "serve",
           (_SERVE,)),
    EnvVar("HARNESS_MIGRATE", "bool", True, "`1` applies migrations first (`0` on every machine but one).",
           "serve", (_SERVE,)),
    EnvVar("MIGRATION_DATABASE_URL", "str", "", "The tables' owner: it migrates and grants HARNESS_RUNTIME_ROLE "
           "its privileges; unset, DATABASE_URL migrates.", "serve", (_SERVE,)),
    EnvVar("HARNESS_RUNTIME_ROLE", "str", "", "The role DATABASE_URL connects as, granted its privileges after "
           "every migration.", "serve", (_SERVE,)),
    EnvVar("PORT", "int", 8000, "bin/start's console port (and the one bin/example's examples talk to).", "serve",
           (_START, _EXAMPLE)),
    EnvVar("HARNESS_EXAMPLE_AS", "str", "", "bin/example: mint a personal token of this demo console user (`operator`, "
           "`reviewer`, `admin`) instead of an agent token (run_bundle: `admin`).", "serve", (_EXAMPLE,)),
    EnvVar("HARNESS_EXAMPLE_PROJECT", "str", "novelforge", "bin/example: the project its agent token is minted for.",
           "serve", (_EXAMPLE,)),
    EnvVar("MCP_PORT", "int", Derived("PORT + 1"), "bin/start's MCP server port (`/mcp`).", "serve", (_START,)),
    EnvVar("PYTHON", "str", "python3.11", "The Python bin/setup makes `.venv` with (`python3` when absent).",
           "serve", ("bin/setup",)),
    # The agent client and the examples: client/ imports nothing of the server, so these names are its own
    # literals, held to these declarations by the test.
    EnvVar("HARNESS_URL", "str", "", "The server the client talks to (unless given `base_url=`), e.g. "
           "`http://127.0.0.1:8000`.", "client",
           ("client/", "examples/", _EXAMPLE)),
    EnvVar("HARNESS_TOKEN", "str", "", "The client's agent token (unless given `token=`; `manage.py "
           "create_agent_token`).", "client",
           ("client/", "examples/", _EXAMPLE)),
    EnvVar("HARNESS_MCP_URL", "str", Derived("HARNESS_URL's host, its port + 1, `/mcp`"), "The MCP example's "
           "endpoint (bin/start's layout by default; behind bin/serve's proxy, HARNESS_URL + `/mcp`).", "client",
           ("examples/",)),
    EnvVar("EXAMPLE_SESSION", "str", "agents-sdk-example", "The Agents SDK example's session ref.", "client",
           ("examples/",)),
)

DECLARED: dict[str, EnvVar] = {var.name: var for var in _VARIABLES}
if len(DECLARED) != len(_VARIABLES):
    raise ValueError("harness/env.py declares a variable twice.")


def _declared(name: str, kind: Kind, derived: object = None) -> EnvVar:
    """The declaration of `name`, checked against how it is read: its kind, and a derived default passed exactly
    when the declaration's is Derived. Checked whether or not the variable is set, so a wrong read fails every
    time, not only in the environment that leaves it unset."""
    var = DECLARED.get(name)
    if var is None:
        raise UndeclaredVariable(f"{name} is not declared: add it to harness/env.py, then run "
                                 "`python -m harness.env --write`.")
    if var.kind != kind:
        raise UndeclaredVariable(f"{name} is declared as {var.kind}, not read as {kind}.")
    if isinstance(var.default, Derived) and derived is None:
        raise UndeclaredVariable(f"{name}'s default is derived ({var.default.text}): pass derived=.")
    if not isinstance(var.default, Derived) and derived is not None:
        raise UndeclaredVariable(f"{name}'s default is declared in harness/env.py: do not pass derived=.")
    return var


def _default(var: EnvVar, derived: T | None, kind: type[T]) -> T:
    """The declared default, or the one the caller derived (which _declared allowed)."""
    default: object = derived if derived is not None else var.default
    if isinstance(default, tuple):
        default = list(default)
    if not isinstance(default, kind):
        raise UndeclaredVariable(f"{var.name}'s default {default!r} is not a {kind.__name__}.")
    return default


def env_str(name: str, *, derived: str | None = None) -> str:
    return _str(_declared(name, "str", derived), derived)


def _str(var: EnvVar, derived: str | None) -> str:
    value = os.environ.get(var.name)
    if value is not None:
        return value
    if var.default is None:
        raise ImproperlyConfigured(f"The environment variable {var.name} is required.")
    return _default(var, derived, str)


def env_bool(name: str, *, derived: bool | None = None) -> bool:
    var = _declared(name, "bool", derived)
    raw = os.environ.get(name)
    if raw is None:
        return _default(var, derived, bool)
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off).")


def env_int(name: str, *, derived: int | None = None) -> int:
    var = _declared(name, "int", derived)
    raw = os.environ.get(name)
    if raw is None:
        return _default(var, derived, int)
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if var.minimum is not None and value < var.minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {var.minimum}.")
    return value


def env_list(name: str, *, derived: list[str] | None = None) -> list[str]:
    var = _declared(name, "list", derived)
    raw = os.environ.get(name)
    if raw is None:
        return _default(var, derived, list)
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_json_object(name: str) -> dict[str, Any]:
    """A JSON object; unset or empty, the declared default's."""
    var = _declared(name, "json")
    raw = os.environ.get(name) or _default(var, None, str)
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object.")
    return value


def env_secret(name: str) -> str:
    """A secret from NAME, or from the file that NAME_FILE names (a Docker/Kubernetes secret mount), so the
    value need not sit in the process's environment (readable in /proc, copied into every child).

    Setting both is refused: which one wins would be a guess. One trailing newline (what `echo` and most
    editors add) is dropped; any other whitespace is part of the secret.
    """
    var = _declared(name, "secret")
    path = os.environ.get(f"{name}_FILE")
    if path is None:
        return _str(var, None)
    if name in os.environ:
        raise ImproperlyConfigured(f"Set {name} or {name}_FILE, not both.")
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read()
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc.strerror}.") from None
    value = value.removesuffix("\n").removesuffix("\r")
    if not value:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} is empty.")
    return value


# The configuration page (docs/operations/configuration.md): the generated text sits between these markers.
PAGE = Path(__file__).resolve().parent.parent / "docs" / "operations" / "configuration.md"
BEGIN = "<!-- env:begin -->"
END = "<!-- env:end -->"
WRITE_COMMAND = "python -m harness.env --write"


def _shown_default(var: EnvVar) -> str:
    default = var.default
    if isinstance(default, Derived):
        return default.text
    if default is None:
        return "required"
    if isinstance(default, bool):
        return "`1`" if default else "`0`"
    if isinstance(default, tuple):
        default = ",".join(default)
    return f"`{default}`" if default != "" else "unset"


def _shown_doc(var: EnvVar) -> str:
    doc = var.doc
    if var.secret:
        doc = f"Secret, or `{var.name}_FILE`. {doc}"
    if var.minimum is not None:
        doc = f"{doc} At least {var.minimum}."
    return doc.replace("|", "\\|")


def _shown_readers(var: EnvVar) -> str:
    return ", ".join("settings" if path == _SETTINGS else f"`{path}`" for path in var.read_by)


def markdown() -> str:
    """The page's generated text, a table per section in SECTIONS' order (the markers not included)."""
    lines = [f"<!-- Generated from harness/env.py by `{WRITE_COMMAND}`: edit the declarations, not this text. -->"]
    for key, (title, pages) in SECTIONS.items():
        lines += ["", f"### {title}", "", f"Described in {pages}.", "",
                  "| Variable | Default | What it does | Read by |", "|---|---|---|---|"]
        lines += [f"| `{var.name}` | {_shown_default(var)} | {_shown_doc(var)} | {_shown_readers(var)} |"
                  for var in _VARIABLES if var.section == key]
    return "\n".join(lines) + "\n"


def page_with_markdown(page: str) -> str:
    """The page's text with the generated text between its markers replaced by markdown()'s."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{PAGE} has no {BEGIN} ... {END} markers.")
    return f"{head}{BEGIN}\n{markdown()}{END}{tail}"


def main(argv: list[str]) -> int:
    if argv == ["--markdown"]:
        sys.stdout.write(markdown())
        return 0
    if argv == ["--write"]:
        PAGE.write_text(page_with_markdown(PAGE.read_text()))
        return 0
    sys.stderr.write("usage: python -m harness.env --markdown | --write\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
