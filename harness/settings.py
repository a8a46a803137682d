"""Settings, read from the environment (see README "Configuration").

With no environment at all this runs the embedded local start: DEBUG on, an SQLite file under var/,
and Celery on the filesystem transport. Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL
(Redis), SECRET_KEY and ALLOWED_HOSTS.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from harness.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("HARNESS_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
_secret = env_str("SECRET_KEY", "")
if not _secret:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off.")
    _secret = "insecure-local-development-key-do-not-use-in-production"
SECRET_KEY = _secret
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "harness.urls"
WSGI_APPLICATION = "harness.wsgi.application"
ASGI_APPLICATION = "harness.asgi.application"

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
            ],
        },
    }
]


def _database() -> dict:
    url = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'harness.sqlite3'}")
    try:
        config = dj_database_url.parse(url)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    engine = config["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        # The embedded default: WAL lets the web process read while the worker writes, and
        # IMMEDIATE transactions take the write lock up front instead of failing on upgrade.
        Path(config["NAME"]).parent.mkdir(parents=True, exist_ok=True)
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;",
        }
        config["CONN_MAX_AGE"] = 0
    elif engine == "django.db.backends.postgresql":
        options: dict = {"server_side_binding": env_bool("DATABASE_SERVER_SIDE_BINDING", False)}
        pool_size = env_int("DATABASE_POOL_MAX_SIZE", 0, minimum=0)
        if pool_size:
            # psycopg's pool opens lazily, on the first query, so gunicorn forks before it exists.
            options["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": 10}
            config["CONN_MAX_AGE"] = 0
        else:
            config["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0)
            config["CONN_HEALTH_CHECKS"] = True
        config["OPTIONS"] = options
    else:
        raise ImproperlyConfigured(f"Unsupported database engine {engine!r}: use PostgreSQL or SQLite.")
    return config


DATABASES = {"default": _database()}
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

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"

# Request limits: enforced by harness.middleware before any view parses the body.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("HARNESS_MAX_BODY_BYTES", 1_048_576, minimum=1024)
HARNESS_MAX_JSON_DEPTH = env_int("HARNESS_MAX_JSON_DEPTH", 32, minimum=4)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "harness.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "harness.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Harness Console API",
    "DESCRIPTION": "Durable state for AI-agent work: sessions, runs, checkpoints, approvals, effects, memory.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# Celery: Redis in production; the filesystem transport serves the local start with no server.
# The database, not the broker, is the source of truth: the recovery pass re-finds lost work.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("out", "processed"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 300, minimum=10),
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
HARNESS_RECOVERY_INTERVAL_SECONDS = env_int("HARNESS_RECOVERY_INTERVAL_SECONDS", 30, minimum=1)

# Tool adapters the resume worker may execute, by name: {"name": {"kind": "http"|"python", ...}}.
HARNESS_TOOL_ADAPTERS: dict = {}
HARNESS_DEFAULT_LEASE_SECONDS = env_int("HARNESS_DEFAULT_LEASE_SECONDS", 60, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
