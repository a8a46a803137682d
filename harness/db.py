"""Database helpers for the few statements every request or resume runs.

Django keeps psycopg's prepared statements off and binds parameters on the client, so a statement is
parsed and planned by PostgreSQL on every execution. For the hand-written hot statements (a CTE that
appends an item, writes a checkpoint, claims a run) planning cost as much as running: about 1 ms of a
2 ms checkpoint write. `prepared_cursor()` gives such a statement a server-binding cursor that
prepares it once per connection; it is still a Django cursor, so query logging, `execute_wrapper`
and the test suite's query counts see it.
"""

import datetime as dt
import functools
from collections.abc import Callable, Sequence
from typing import Any, Self, TypeVar

import orjson
import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, pre_init
from psycopg._queries import PostgresQuery, _query2pg_nocache  # private: psycopg is pinned (requirements.lock)
from psycopg.adapt import Loader

_M = TypeVar("_M", bound=Model)


@functools.lru_cache(maxsize=256)
def _converted(query: str, encoding: str) -> Any:
    return _query2pg_nocache(query.encode(encoding), encoding)


class _HotQuery(PostgresQuery):
    """A hand-written statement's text, its `%(name)s` placeholders turned into `$n` once per process.

    psycopg keeps that conversion only for texts of at most 4,096 bytes (psycopg._queries'
    MAX_CACHED_STATEMENT_LENGTH, against ORM-built texts that never repeat); the checkpoint write, 4.3 KB with its
    claim and caller CTEs, had its text split by a regular expression on every request (a third of that request's
    CPU under cProfile), and the resume's load, 6.2 KB, on every resume (bench/README.md, issue 35). The statements run through prepared_cursor are a handful of fixed
    texts (a text is a module's constant), so every one is kept, keyed by the str itself (its hash is computed once);
    the cache is bounded all the same. The parts are shared between calls, as psycopg's own cache shares them."""

    __slots__ = ()

    def convert(self, query: Any, vars: Any) -> None:
        if vars is None or type(query) is not str:
            super().convert(query, vars)
            return
        self.query, self._want_formats, self._order, self._parts = _converted(query, self._tx.encoding)
        self.dump(vars)


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding; every statement is prepared on first use (when the connection allows it), its text
    converted once per process (_HotQuery)."""

    _query_cls = _HotQuery

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
                ) -> Self:
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


class _LoggedPreparingCursor(_PreparingCursor):
    """With query logging on (DEBUG, the test suite's query counts): psycopg keeps the statement's
    text only when it sends it, not for a prepared one, and Django logs that text."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
                ) -> Self:
        super().execute(query, params, prepare=prepare, binary=binary)
        if self._query is None:
            self._query = self._convert_query(query, params)
        return self


def prepared_cursor() -> CursorWrapper:
    """A cursor (use it as a context manager) whose statements are prepared once per connection.

    With DATABASE_PREPARED_STATEMENTS=0 its parameters are still
    bound on the server but nothing is prepared.
    """
    db = connections[DEFAULT_DB_ALIAS]
    # What BaseDatabaseWrapper.cursor() does first: this is often a request's first statement (the
    # token lookup), so it must be the one that notices a persistent connection the server dropped.
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    raw = (_LoggedPreparingCursor if db.queries_logged else _PreparingCursor)(db.connection)
    # django-stubs type make_cursor's argument as a CursorWrapper; Django passes it the driver's cursor.
    wrap = db.make_debug_cursor if db.queries_logged else db.make_cursor
    return wrap(raw)  # type: ignore[arg-type]


class _TextAsBytes(Loader):
    """A text result as the bytes PostgreSQL sent (UTF-8: Django's connections set client_encoding to UTF8)."""

    def load(self, data: Any) -> bytes:
        return bytes(data)


def fetch_json_text(sql: str, params: dict[str, Any]) -> bytes | None:
    """The one text column of a statement's one row (None: no row, or NULL), as its UTF-8 bytes: a JSON text
    PostgreSQL wrote that the API sends as it comes. Not decoded to str to be encoded back: for a lineage of 1,000
    ~1 KB checkpoints that was two passes over a megabyte in the web process. A prepared statement.

    Its driver cursor, whose text loader hands out bytes, is made once per connection and kept (_json_text_cursor):
    a new cursor per read (its own adapters map, the loader registered on it) was ~5% of a newest-items read's CPU
    (bench/README.md, issue 35). The cursor is used here only, for one statement and its one row, never while
    another of its reads is open; it is still wrapped in Django's cursor for each read, so query logging, the
    connection's execute wrappers and its error translation see the statement as before."""
    db = connections[DEFAULT_DB_ALIAS]
    db.close_if_health_check_failed()  # as prepared_cursor: it may be a request's first statement
    db.ensure_connection()
    db.validate_thread_sharing()
    logged = db.queries_logged
    raw = _json_text_cursor(db, logged)
    cursor = (db.make_debug_cursor if logged else db.make_cursor)(raw)  # type: ignore[arg-type]  # as above
    cursor.execute(sql, params)
    row = cursor.fetchone()
    return None if row is None else row[0]


_JSON_CURSOR_ATTR = "_harness_json_text_cursor"


def _json_text_cursor(db: Any, logged: bool) -> psycopg.Cursor:
    """The connection's kept cursor for fetch_json_text (one for logged statements, one for the others), made
    anew when Django has opened another connection since, or the cursor was closed."""
    kept: dict[bool, psycopg.Cursor] | None = getattr(db.connection, _JSON_CURSOR_ATTR, None)
    if kept is None:
        kept = {}
        setattr(db.connection, _JSON_CURSOR_ATTR, kept)  # on the driver's connection: it goes with it
    cursor = kept.get(logged)
    if cursor is None or cursor.closed:
        cursor = kept[logged] = (_LoggedPreparingCursor if logged else _PreparingCursor)(db.connection)
        cursor.adapters.register_loader("text", _TextAsBytes)
    return cursor


# A list of ids as a hot statement takes it: one comma-joined text that PostgreSQL splits (`id_list_sql`), not a
# bigint[] parameter, which psycopg dumps in Python element by element (bench/README.md: three such arrays were a
# tenth of a keyed append's CPU in the web process).
def id_list(ids: Sequence[int]) -> str:
    return ",".join(str(int(i)) for i in ids)


def id_list_sql(param: str) -> str:
    """The bigint[] that `id_list`'s text in the named parameter `param` stands for."""
    return f"string_to_array(%({param})s::text, ',')::bigint[]"


@functools.cache
def _fields_by_column(model: type[Model]) -> dict[str, tuple[str, list[Callable[..., Any]]]]:
    return {str(f.column): (f.attname, f.get_db_converters(connection)) for f in model._meta.concrete_fields}


def columns(model: type[Model], alias: str = "") -> str:
    """Every column of the model, by name (`alias.` before each when given): a prepared `*` would
    fail once a migration adds a column while the connection lives ("cached plan must not change
    result type")."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + connection.ops.quote_name(column) for column in _fields_by_column(model))


def returning(model: type[Model]) -> str:
    return "RETURNING " + columns(model)


def fetch_instance(model: type[_M], sql: str, params: Any) -> _M | None:
    """Run one prepared statement and build the model instance from its first row (None if none).

    What `Model.objects.raw()` does for one row, minus its per-query column mapping: columns are
    matched by name, fields the statement does not return are deferred (loaded on access).
    """
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
        plan = _row_plan(model, sql, cursor) if row is not None else None
    if row is None or plan is None:
        return None
    attnames, picks = plan
    values = []
    for index, converters in picks:
        value = row[index]
        for converter in converters:
            value = converter(value, None, connection)
        values.append(value)
    return build_instance(model, attnames, values)


# A statement's text fixes its result's columns (they are named in it, never `*` of a table): which of them
# build the model, and with which converters, is worked out once per statement. `cursor.description` builds an
# object per column on every call, a hundred for a run's row.
_Plan = tuple[tuple[str, ...], tuple[tuple[int, tuple[Callable[..., Any], ...]], ...]]
_PLANS: dict[tuple[type[Model], str], _Plan] = {}
_PLANS_KEPT = 512  # statements built at run time (a compiled ORM UPDATE) are few shapes; past this, not kept


def _row_plan(model: type[Model], sql: str, cursor: CursorWrapper) -> _Plan:
    plan = _PLANS.get((model, sql))
    if plan is None:
        index = {column[0]: i for i, column in enumerate(cursor.description)}
        # In the model's field order: the fields the statement does not return are left deferred.
        fields = [(attname, index[column], tuple(converters))
                  for column, (attname, converters) in _fields_by_column(model).items() if column in index]
        plan = tuple(f[0] for f in fields), tuple((f[1], f[2]) for f in fields)
        if len(_PLANS) < _PLANS_KEPT:
            _PLANS[(model, sql)] = plan
    return plan


def build_instance(model: type[_M], attnames: Sequence[str], values: Sequence[Any]) -> _M:
    """`model.from_db(alias, attnames, values)` (values already converted, in the model's field order), without
    `Model.__init__`'s per-field `setattr` and its two signals, when that changes nothing: the model keeps
    Django's `__init__` and `from_db`, nobody listens to `pre_init`/`post_init`, and every field's descriptor
    is Django's plain one, which keeps the value in the instance's `__dict__` under its attname. A resume
    builds a dozen instances; `__init__` was a fifteenth of its CPU. Otherwise (a model that needs more),
    `from_db` itself."""
    if not _plainly_built(model) or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(connection.alias, list(attnames), list(values))
    instance = model.__new__(model)
    state = ModelState()
    state.adding, state.db = False, connection.alias
    instance._state = state
    instance.__dict__.update(zip(attnames, values, strict=True))
    return instance


@functools.cache
def _plainly_built(model: type[Model]) -> bool:
    plain = (DeferredAttribute, ForeignKeyDeferredAttribute)
    return (model.__init__ is Model.__init__ and model.from_db.__func__ is Model.from_db.__func__  # type: ignore[attr-defined]
            and all(type(getattr(model, f.attname, None)) in plain for f in model._meta.concrete_fields))


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def json_rows(rows: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """Rows of (a JSON object's text, epoch microseconds) as the objects, each with its `created_at`.

    For reads that write each row as the API's JSON in SQL: one decode for all of them costs a
    fraction of decoding each row's JSON columns, and the time as epoch microseconds a fraction of
    parsing timestamps in Python. orjson decodes the 660 KB of a 1,000-deep lineage in 2.4 ms of CPU
    where the standard library's json takes 3.9 ms (LangGraph's checkpointer decodes with it too).
    """
    objects: list[dict[str, Any]] = orjson.loads("[" + ",".join(row[0] for row in rows) + "]")
    micros = dt.timedelta
    for obj, row in zip(objects, rows, strict=True):
        obj["created_at"] = EPOCH + micros(microseconds=row[1])
    return objects


def api_time_sql(column: str) -> str:
    """SQL rendering a timestamptz as the API's JSON string (DRF's DateTimeField: UTC, ISO 8601, a `Z`,
    microseconds only when there are any), for responses PostgreSQL writes and the view passes through."""
    utc = f"({column} AT TIME ZONE 'UTC')"
    return (f"""'"' || to_char({utc}, 'YYYY-MM-DD"T"HH24:MI:SS') """
            f"""|| CASE to_char({utc}, 'US') WHEN '000000' THEN '' ELSE '.' || to_char({utc}, 'US') END || 'Z"'""")
