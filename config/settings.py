"""Settings, read from the environment (docs/operations/configuration.md).

With no environment at all this is the local start's configuration: the embedded PostgreSQL that
bin/start runs (harness.ops.local_postgres, its socket under var/) and Celery on the filesystem transport.
Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis), SECRET_KEY and ALLOWED_HOSTS.
"""

from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from harness.env import env_bool, env_int, env_json_object, env_list, env_secret, env_str
from harness.ops import local_postgres
from harness.ops.logs import CELERY_TASK_LOGGERS

# Lets the classes django-stubs declare generic be subscripted at run time too (`ModelAdmin[Run]`), as
# mypy --strict asks of the apps; it only adds __class_getitem__ to them.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("HARNESS_VAR_DIR", derived=str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG")
# Each secret may come from a file instead (SECRET_KEY_FILE, DATABASE_URL_FILE, ...: harness.env.env_secret).
_secret = env_secret("SECRET_KEY")
if not _secret:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off.")
    # S105: a fallback only when DEBUG is on (the branch above refuses a missing key otherwise).
    _secret = "insecure-local-development-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY = _secret
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", derived=["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "harness.apps.HarnessAdminConfig",  # django.contrib.admin, entered by the admin role (harness.admin_helpers)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "harness",
    "sessions_app",
    "runs_app",
    "memory_app",
    "notify_app",
    "bundles_app",
    "worker",
    "console",
]
# The demo (demo/: `load_demo`, the publish_chapter tool it fakes, its plan's node handlers) is off unless
# HARNESS_DEMO is set, as bin/start and bin/test do: production has no demo app, tool or node handler.
HARNESS_DEMO = env_bool("HARNESS_DEMO")
if HARNESS_DEMO:
    INSTALLED_APPS.append("demo")

MIDDLEWARE = [
    # First, so its timing, request id and log context cover every other middleware (harness.ops.observe).
    "harness.ops.observe.RequestObservationMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves /static/ (console CSS, htmx, the API docs' Swagger assets) from gunicorn too, not only runserver.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "harness.http.middleware.RequestLimitsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "harness.http.idempotency.IdempotencyMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A write to a row imported read-only (bundles_app) is a 409 page, not a 500 (harness.http.middleware).
    "harness.http.middleware.ImportedRefusalMiddleware",
]

# What an agent's call (`/api/v1/` with a bearer token) goes through: MIDDLEWARE without the browser's
# parts (harness.http.handlers). It must stay an ordered subsequence of MIDDLEWARE (tests/harness/test_api_chain.py).
API_MIDDLEWARE = [
    "harness.ops.observe.RequestObservationMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "harness.http.middleware.RequestLimitsMiddleware",
    "django.middleware.common.CommonMiddleware",
    "harness.http.idempotency.IdempotencyMiddleware",
]

# What /healthz, /readyz and /metrics go through (harness.http.handlers): the observation alone.
PROBE_MIDDLEWARE = ["harness.ops.observe.RequestObservationMiddleware"]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.console_counts",
                "console.context_processors.console_push",
            ],
        },
    }
]


def _database(url: str) -> dict[str, Any]:
    # PostgreSQL only: one SQL dialect everywhere. Unset (or empty), DATABASE_URL is bin/start's embedded
    # server, reached through its socket under var/, so manage.py commands find it while bin/start runs.
    try:
        config: dict[str, Any] = dict(dj_database_url.parse(url))
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    engine = config.get("ENGINE")
    if engine != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            f"DATABASE_URL must name a PostgreSQL database (postgres://...), not {engine!r}: "
            "no other database is supported, SQLite included."
        )
    # Query-string options of the URL (e.g. ?sslmode=require) are kept; these are added to them.
    options: dict[str, Any] = {**config.get("OPTIONS", {})}
    options["server_side_binding"] = env_bool("DATABASE_SERVER_SIDE_BINDING")
    if env_bool("DATABASE_PREPARED_STATEMENTS"):
        # Only the hot statements ask to be prepared (harness.db.prepared_cursor); a threshold this
        # high keeps psycopg from preparing anything else by itself. Set DATABASE_PREPARED_STATEMENTS=0
        # behind a pooler that cannot carry prepared statements (PgBouncer < 1.21 in transaction mode).
        options["prepare_threshold"] = 2**31 - 1
    pool_size = env_int("DATABASE_POOL_MAX_SIZE")
    if pool_size:
        # psycopg's pool opens lazily, on the first query, so gunicorn forks before it exists.
        options["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": 10}
        config["CONN_MAX_AGE"] = 0
    else:
        config["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE")
        config["CONN_HEALTH_CHECKS"] = True
    config["OPTIONS"] = options
    return config


DATABASES = {"default": _database(env_secret("DATABASE_URL") or local_postgres.database_url(VAR_DIR))}
# A streaming replica for the console's heavy pages (harness.ops.replica): never for the API, a write or the worker.
_replica_url = env_secret("DATABASE_REPLICA_URL")
if _replica_url:
    DATABASES["replica"] = {**_database(_replica_url), "TEST": {"MIRROR": "default"}}
    DATABASE_ROUTERS = ["harness.ops.replica.ReplicaRouter"]
HARNESS_REPLICA_PAGES = frozenset(env_list("HARNESS_REPLICA_PAGES"))
# The console's live pages poll (runs_app.views.live): one cheap "changed?" statement per poll.
HARNESS_CONSOLE_POLL_SECONDS = env_int("HARNESS_CONSOLE_POLL_SECONDS")
# The push's origin for the console's live pages (static/js/push.js); empty: they poll only.
HARNESS_PUSH_URL = env_str("HARNESS_PUSH_URL").rstrip("/")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# Without `collectstatic`, WhiteNoise finds files where the apps keep them; with it, STATIC_ROOT is used.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", derived=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
# HTTPS everywhere unless cookies may go over plain HTTP (DEBUG, bin/test's SECURE_COOKIES=0): then a redirect
# to https:// would only lock the same people out. `manage.py check --deploy` is clean with these defaults
# (tests/ops/test_deploy_settings.py). TLS ends at the proxy (README "Production"), which must set
# X-Forwarded-Proto and drop any the client sent: SECURE_PROXY_SSL_HEADER trusts it.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", derived=SESSION_COOKIE_SECURE)
# The probes and the metrics are asked for over plain HTTP by a load balancer or Prometheus on the inside.
SECURE_REDIRECT_EXEMPT = [r"^(healthz|readyz|metrics)$"]
if env_bool("SECURE_PROXY_SSL_HEADER", derived=SESSION_COOKIE_SECURE):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", derived=31_536_000 if SESSION_COOKIE_SECURE else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS")
# Preloading is a promise about the whole domain that only its owner can make (and hard to take back), so it
# is opt-in, and check --deploy's reminder about it (W021) is silenced rather than answered for them.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD")
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# Request limits: enforced by harness.http.middleware before any view parses the body.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("HARNESS_MAX_BODY_BYTES")
HARNESS_MAX_JSON_DEPTH = env_int("HARNESS_MAX_JSON_DEPTH")
# The agent's hottest calls (append, newest items, checkpoint write, lineage) answered without DRF's dispatch when
# they are plain (harness.http.plain): the same checks, services and replies. 0 sends every call through DRF's views.
HARNESS_PLAIN_PATH = env_bool("HARNESS_PLAIN_PATH")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "harness.http.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["harness.http.parsers.StrictJSONParser"],
    # DRF's JSON rendering and negotiation, with the common case done in fewer steps (harness.http.renderers).
    "DEFAULT_RENDERER_CLASSES": ["harness.http.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "harness.http.renderers.ContentNegotiation",
    "EXCEPTION_HANDLER": "harness.http.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    # Per token, on the cache (Redis in production), one round trip a request: harness.http.throttling.
    "DEFAULT_THROTTLE_CLASSES": ["harness.http.throttling.TokenRateThrottle"],
}
# An agent token's rate: "N/s", "N/min" or "N/hour" (a fixed window), or "off". A caller over it gets 429
# with Retry-After (the seconds left in the window).
HARNESS_API_RATE = env_str("HARNESS_API_RATE")
# Failed console logins per client address and username before the login answers 429 for the window.
HARNESS_LOGIN_RATE = env_str("HARNESS_LOGIN_RATE")
# The request header (WSGI name, e.g. HTTP_X_REAL_IP) in which the proxy puts the client's address; unset, the
# login limit counts REMOTE_ADDR, which behind a proxy is the proxy's (then it is, in effect, per username).
HARNESS_CLIENT_IP_HEADER = env_str("HARNESS_CLIENT_IP_HEADER")
SPECTACULAR_SETTINGS = {
    "TITLE": "Harness Console API",
    "DESCRIPTION": "Durable state for AI-agent work: sessions, runs, checkpoints, approvals, effects, memory.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # harness.http.api_base.IdConverter: `<id:pk>` is 1 to 18 digits (a bigint), documented as an integer.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}},
    "ENUM_NAME_OVERRIDES": {
        "SessionStatusEnum": "sessions_app.models.SessionStatus",
        "SessionRoleEnum": "sessions_app.models.SessionRole",
        "ItemRoleEnum": "sessions_app.models.ItemRole",
        "RunStatusEnum": "runs_app.models.RunStatus",
        "TaskStatusEnum": "runs_app.models.TaskStatus",
        "ApprovalStatusEnum": "runs_app.models.ApprovalStatus",
        "EffectStatusEnum": "runs_app.models.EffectStatus",
        "HandoffStatusEnum": "runs_app.models.HandoffStatus",
        "MemoryStatusEnum": "memory_app.models.MemoryStatus",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "harness.http.api_base.document_errors_and_idempotency",
    ],
}

# Celery: Redis in production; the filesystem transport serves the local start with no server.
# The database, not the broker, is the source of truth: the recovery pass re-finds lost work.
CELERY_BROKER_URL = env_secret("CELERY_BROKER_URL")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("out", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "control_folder": str(_broker_dir / "control"),
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT"),
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER")
# The worker logs through LOGGING (JSON lines with the task's ids: harness.ops.logs), not Celery's own handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery's Django fixup closes every database connection before and after each task unless this is
# set; config.celery applies Django's own rule instead (CONN_MAX_AGE, health checks). The fixup
# still closes them once per this many tasks.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
HARNESS_RECOVERY_INTERVAL_SECONDS = env_int("HARNESS_RECOVERY_INTERVAL_SECONDS")
HARNESS_WORKER_HEARTBEAT_SECONDS = env_int("HARNESS_WORKER_HEARTBEAT_SECONDS")
# /readyz is not ready when no worker has beaten for this long (three missed beats by default).
HARNESS_WORKER_HEARTBEAT_MAX_AGE = env_int("HARNESS_WORKER_HEARTBEAT_MAX_AGE",
                                           derived=3 * HARNESS_WORKER_HEARTBEAT_SECONDS)
# How long a duplicate keyed POST waits for the first request with its Idempotency-Key before it is answered
# 409 idempotency_in_progress with Retry-After (harness.http.idempotency): a worker is not held for the
# first's whole run.
HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS = env_int("HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS")
HARNESS_WEBHOOK_SWEEP_SECONDS = env_int("HARNESS_WEBHOOK_SWEEP_SECONDS")
HARNESS_STALE_RUN_GRACE = env_int("HARNESS_STALE_RUN_GRACE")
CELERY_BEAT_SCHEDULE = {
    "recovery-pass": {
        "task": "worker.recovery_pass",
        "schedule": float(HARNESS_RECOVERY_INTERVAL_SECONDS),
        # A pass nobody ran in time is superseded by the next one; don't let them pile up.
        "options": {"expires": float(HARNESS_RECOVERY_INTERVAL_SECONDS)},
    },
    "prune-idempotency-keys": {"task": "harness.prune_idempotent_requests", "schedule": 3600.0},
    # Each project's retention policy (runs_app.retention): bounded rounds per pass, so a pass that overlaps
    # the next hour's is only slower, never wrong (each round re-reads the keep rules).
    "retention-pass": {"task": "runs.retention_pass", "schedule": 3600.0, "options": {"expires": 3600.0}},
    # Proves beat -> broker -> worker -> database end to end; /readyz reads its time (harness.ops.health).
    "worker-heartbeat": {
        "task": "worker.heartbeat",
        "schedule": float(HARNESS_WORKER_HEARTBEAT_SECONDS),
        "options": {"expires": float(HARNESS_WORKER_HEARTBEAT_SECONDS)},
    },
    # Webhook deliveries recorded by notify_app's triggers, and those whose retry message was lost: sent.
    "send-webhooks": {"task": "notify.send_due", "schedule": float(HARNESS_WEBHOOK_SWEEP_SECONDS),
                      "options": {"expires": float(HARNESS_WEBHOOK_SWEEP_SECONDS)}},
}

# Outbound webhooks (notify_app): attempts per delivery, the first retry's delay (doubling each time, capped
# at an hour), each POST's timeout; the console's address for links in reviewer emails and Slack messages.
HARNESS_WEBHOOK_MAX_ATTEMPTS = env_int("HARNESS_WEBHOOK_MAX_ATTEMPTS")
HARNESS_WEBHOOK_BACKOFF_SECONDS = env_int("HARNESS_WEBHOOK_BACKOFF_SECONDS")
HARNESS_WEBHOOK_TIMEOUT_SECONDS = env_int("HARNESS_WEBHOOK_TIMEOUT_SECONDS")
# Webhook and Slack URLs that are or resolve to loopback, private, link-local (cloud metadata) or other internal
# addresses are refused at registration and at every send (notify_app.outbound); 1 allows them, for local
# development and the test suite's receivers on 127.0.0.1. Off in production.
HARNESS_WEBHOOK_ALLOW_PRIVATE = env_bool("HARNESS_WEBHOOK_ALLOW_PRIVATE")
HARNESS_CONSOLE_URL = env_str("HARNESS_CONSOLE_URL").rstrip("/")
EMAIL_BACKEND = env_str("EMAIL_BACKEND")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL")
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_PORT = env_int("EMAIL_PORT")


# The throttles' counters. Redis in production (CACHE_URL, or the broker's Redis when the broker is Redis), so
# every process counts against one limit; the local start (filesystem broker) counts in each process's memory.
_cache_url = env_secret("CACHE_URL")
if not _cache_url and CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    _cache_url = CELERY_BROKER_URL
CACHES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url,
                "KEY_PREFIX": "harness", "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2}}
    if _cache_url else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}

# /metrics (harness.ops.metrics) answers only a request carrying this bearer token; unset, it answers 404.
HARNESS_METRICS_TOKEN = env_secret("HARNESS_METRICS_TOKEN")
# What /metrics reads from the database when scraped, one collector per app (the kernel imports no app).
HARNESS_METRICS_COLLECTORS = [
    "harness.ops.metrics.WorkerStateCollector",
    "runs_app.metrics.RunStateCollector",
    "memory_app.metrics.MemoryStateCollector",
]


# Tool adapters the resume worker may execute, by name, resolved at resume time (worker.adapters):
# {"name": {"kind": "http", "url": ..., "timeout": 10, "connect_timeout": 3, "headers": {...}} or
#  {"kind": "python", "callable": "dotted.path"}}, each with "honours_idempotency_key": true when an unknown
#  outcome may be re-sent under its key, or a lookup by key ("status_url" / "lookup"; worker.adapters).
# None by default; HARNESS_DEMO adds the demo's. The JSON in HARNESS_TOOL_ADAPTERS is merged over these; an
# entry set to null removes it.
_DEMO_TOOL_ADAPTERS = {
    # The demo's tool derives its publish record from the key, so it honours idempotency keys.
    "publish_chapter": {"kind": "python", "callable": "demo.tools.publish_chapter",
                        "required_arguments": ["chapter", "title"], "honours_idempotency_key": True},
    "pay_royalties": {"kind": "python", "callable": "demo.tools.pay_royalties",
                      "required_arguments": ["payee", "amount_eur"], "honours_idempotency_key": True},
}
# Values are JSON from the environment as given; worker.adapters checks each entry when it resolves it.
HARNESS_TOOL_ADAPTERS: dict[str, Any] = {
    **(_DEMO_TOOL_ADAPTERS if HARNESS_DEMO else {}),
    **env_json_object("HARNESS_TOOL_ADAPTERS"),
}
HARNESS_TOOL_ADAPTERS = {name: config for name, config in HARNESS_TOOL_ADAPTERS.items() if config is not None}
# Node handlers for worker-driven task plans (worker.handlers), by node name: none by default,
# HARNESS_DEMO adds the demo plan's; the same JSON override.
_DEMO_NODE_HANDLERS = {
    "outline": "demo.nodes.outline",
    "draft": "demo.nodes.draft",
    "summarize": "demo.nodes.summarize",
}
# Values are JSON from the environment as given; worker.handlers checks each path when it imports it.
HARNESS_NODE_HANDLERS: dict[str, Any] = {
    **(_DEMO_NODE_HANDLERS if HARNESS_DEMO else {}),
    **env_json_object("HARNESS_NODE_HANDLERS"),
}
HARNESS_NODE_HANDLERS = {name: path for name, path in HARNESS_NODE_HANDLERS.items() if path}
HARNESS_WORKER_LEASE_SECONDS = env_int("HARNESS_WORKER_LEASE_SECONDS")
HARNESS_EFFECT_MAX_ATTEMPTS = env_int("HARNESS_EFFECT_MAX_ATTEMPTS")
HARNESS_RESUME_MAX_ATTEMPTS = env_int("HARNESS_RESUME_MAX_ATTEMPTS")
HARNESS_DEFAULT_LEASE_SECONDS = env_int("HARNESS_DEFAULT_LEASE_SECONDS")
# The version of what a worker-driven plan runs on (its node handlers and tools, "major.minor"): the worker's
# checkpoints record it, and a resume refuses a checkpoint recorded under another major version
# (worker.steps.compatibility). Bump the major when a deploy changes what a saved position means.
HARNESS_FRAMEWORK_VERSION = env_str("HARNESS_FRAMEWORK_VERSION")

# One JSON object per line on stderr (LOG_FORMAT=text for people at a terminal; DEBUG's default), each with the
# request id, project, run, approval and Celery task ids in effect, and secrets scrubbed (harness.ops.logs).
LOG_FORMAT = env_str("LOG_FORMAT", derived="text" if DEBUG else "json")
# One line per request (method, route, status, duration): harness.ops.observe.
HARNESS_ACCESS_LOG = env_bool("HARNESS_ACCESS_LOG")
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} is not json or text.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "harness.ops.logs.ContextFilter"},
                "quiet_periodic": {"()": "harness.ops.logs.QuietPeriodicTasks"}},
    "formatters": {
        "json": {"()": "harness.ops.logs.JsonFormatter"},
        "text": {"()": "harness.ops.logs.TextFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["context"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL")},
    # A periodic task's routine lines are DEBUG unless it did something (harness.ops.logs.QuietPeriodicTasks).
    "loggers": {name: {"filters": ["quiet_periodic"]} for name in CELERY_TASK_LOGGERS},
}
