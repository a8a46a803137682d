import os

import pytest

from tests import factories, template_db

# Per-worker resources under pytest-xdist (bin/test runs several workers): tests/parallel.py. The flush after each
# transactional test by DELETE rather than TRUNCATE: tests/fast_flush.py.
pytest_plugins = ["tests.parallel", "tests.fast_flush"]


def pytest_configure(config: pytest.Config) -> None:
    # The suite's promises are about PostgreSQL; a missing or SQLite DATABASE_URL must fail loudly
    # rather than quietly test something else.
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise pytest.UsageError(
            "The test suite runs on PostgreSQL only: set DATABASE_URL=postgres://... (bin/test does)."
        )


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker, django_db_createdb,  # type: ignore[no-untyped-def]
                    django_db_modify_db_settings, testrun_uid):
    """pytest-django's, but each worker's database is a clone of one migrated template (tests/template_db.py):
    the suite migrates once per schema change, not once per worker per run."""
    from django.db import connections

    others = [alias for alias in connections if alias != "default"]
    with django_db_blocker.unblock():
        clone = template_db.clone_for_this_worker(testrun_uid, rebuild=django_db_createdb)
        next(clone)
        for alias in others:  # a replica alias mirrors the default one in tests (config/settings.py)
            mirror = connections[alias].settings_dict.get("TEST", {}).get("MIRROR")
            if mirror != "default":
                raise pytest.UsageError(f"database {alias!r} is not a test mirror of 'default'")
            connections[alias].creation.set_as_test_mirror(connections["default"].settings_dict)
    yield
    with django_db_blocker.unblock():
        next(clone, None)


@pytest.fixture(autouse=True, scope="session")
def _postgresql_is_the_database() -> None:
    """Fail the whole run, not skip, when PostgreSQL is not the configured or reachable database."""
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    assert db["ENGINE"] == "django.db.backends.postgresql", db["ENGINE"]
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"] or "postgres",
                         dbname="postgres", connect_timeout=5) as conn:
        conn.execute("SELECT 1")


@pytest.fixture(autouse=True)
def _fast_password_hashing(request: pytest.FixtureRequest) -> None:
    """Django's default hasher (PBKDF2, a million rounds) costs ~0.4 s of CPU per user made or logged in, and the
    suite makes thousands: MD5 here, which no test is about. A test whose user logs in to a *child* process (which
    keeps the default hashers and so cannot read an MD5 hash) is marked `real_password_hasher`."""
    if request.node.get_closest_marker("real_password_hasher"):
        return
    settings = request.getfixturevalue("settings")
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def project(db):  # type: ignore[no-untyped-def]
    return factories.make_project("acme")


@pytest.fixture
def other_project(db):  # type: ignore[no-untyped-def]
    return factories.make_project("globex")
