"""The runtime role: the PostgreSQL role the application runs as, which owns nothing.

Two roles, as DESIGN.md asks: the migration role owns the tables (`manage.py migrate` runs as it, and so do
the test suite and bin/start's local database), and the runtime role, which the web processes and the
workers connect as in production and in bin/reliability, only reads and writes rows. Owning nothing, it
cannot disable a trigger, alter or drop a table, or set session_replication_role; and it is granted neither
TRUNCATE anywhere (row triggers do not see TRUNCATE) nor UPDATE/DELETE on the append-only history, which
the triggers of runs_app migrations 0003 and 0013 refuse as well. `manage.py runtime_role NAME` grants what
follows (re-run it after every migration: a new table gets the default), and checks the role is no
superuser, owns no relation and is no member of the tables' owner.
"""

import re

from django.db import connection

# The runtime role's privileges on a table where they differ from the default (read and write rows).
RESTRICTED: dict[str, tuple[str, ...]] = {
    # The audit log: appended (the chaining trigger fills seq and hashes), never rewritten.
    "harness_auditentry": ("SELECT", "INSERT"),
    # Written only by the chaining trigger, which runs as the owner (SECURITY DEFINER).
    "harness_auditchainhead": ("SELECT",),
    "runs_app_runevent": ("SELECT", "INSERT"),
    # Runs go only with their whole history, through the retention door (runs_app migration 0020).
    "runs_app_run": ("SELECT", "INSERT", "UPDATE"),
    # A task's state history: appended by its trigger on runs_app_task (as the writer), never rewritten;
    # deleted only with its task.
    "runs_app_taskstateversion": ("SELECT", "INSERT", "DELETE"),
    # DELETE for a LangGraph thread's deletion only (the runs_app_checkpoint_no_delete trigger checks it).
    "runs_app_checkpoint": ("SELECT", "INSERT", "DELETE"),
    # Items are popped and cleared (audited), never rewritten.
    "sessions_app_sessionitem": ("SELECT", "INSERT", "DELETE"),
    "django_migrations": ("SELECT",),
}
DEFAULT: tuple[str, ...] = ("SELECT", "INSERT", "UPDATE", "DELETE")
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def role_name_valid(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a role name this command takes (lowercase letters, digits, _)")
    return name


def runtime_role_create(name: str) -> None:
    """A login role with no power over the cluster, created unless it exists (roles are the cluster's, so
    several databases, or two test runs at once, may ask for it)."""
    role = role_name_valid(name)
    with connection.cursor() as cursor:
        cursor.execute(f"""
DO $$ BEGIN
    CREATE ROLE "{role}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$""")


def runtime_role_grant(name: str) -> list[str]:
    """Grant the runtime role its privileges on every table of this database's schema (revoking first, so
    a re-run narrows as well as widens); the tables granted, in order."""
    role = role_name_valid(name)
    tables = sorted(connection.introspection.table_names())
    with connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema()), quote_ident(current_database())")
        schema, database = cursor.fetchone()
        cursor.execute(f'GRANT CONNECT ON DATABASE {database} TO "{role}"')
        cursor.execute(f'GRANT USAGE ON SCHEMA {schema} TO "{role}"')
        cursor.execute(f'REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM "{role}"')
        for table in tables:
            privileges = ", ".join(RESTRICTED.get(table, DEFAULT))
            cursor.execute(f'GRANT {privileges} ON {connection.ops.quote_name(table)} TO "{role}"')
        cursor.execute(f'GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO "{role}"')
        # The erasure door (sessions_app migration 0004) is not PUBLIC's: only the runtime role may tombstone.
        cursor.execute(f'GRANT EXECUTE ON FUNCTION {schema}.harness_session_items_erase(bigint[], text) TO "{role}"')
    return tables


def runtime_role_problems(name: str) -> list[str]:
    """What makes the role more than a runtime role in this database (empty when it is one)."""
    role = role_name_valid(name)
    problems: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = %s",
                       [role])
        found = cursor.fetchone()
        if found is None:
            return [f"there is no role {role}"]
        flags = ("is a superuser", "bypasses row security", "may create roles", "may create databases")
        problems += [f"{role} {named}" for flag, named in zip(found, flags, strict=True) if flag]
        cursor.execute("""
            SELECT c.relname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
             WHERE r.rolname = %s AND c.relnamespace = current_schema()::regnamespace LIMIT 5""", [role])
        owned = [row[0] for row in cursor.fetchall()]
        if owned:
            problems.append(f"{role} owns {', '.join(owned)}")
        cursor.execute("""
            SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c
             WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
               AND pg_has_role(%s, c.relowner, 'MEMBER')""", [role])
        owners = [row[0] for row in cursor.fetchall()]
        if owners:
            problems.append(f"{role} is a member of the tables' owner ({', '.join(owners)})")
    return problems
