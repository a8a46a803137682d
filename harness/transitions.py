"""State machines declared as data, and the one compare-and-set that moves a row between states.

Every status change in the project goes through `cas_transition`: a single conditional UPDATE
(`WHERE id = ? AND version = ? AND status IN (legal sources)`) whose row count decides. Nothing
reads the status, checks it in Python and saves it back, so two writers can never both win.

A table may guard an edge (django-fsm-2's `permission=`, as data): the guard names the one kind of
actor who may take it ("worker": the resume worker). For anyone else the edge's source is not among
the UPDATE's legal sources, so a guard costs no read and no `if` in a service; only a refused write
reads the row, to say why.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from django.core.exceptions import EmptyResultSet, FieldDoesNotExist
from django.db import models
from django.db.models import F, Q
from django.db.models.sql import UpdateQuery
from django.utils import timezone

from harness.db import fetch_instance, returning
from harness.http.errors import ConflictError, NotFoundError

_M = TypeVar("_M", bound=models.Model)


@dataclass(frozen=True)
class Guard:
    """An edge only the actor kind `only` may take; anyone else gets a 409 with `code` and `detail`."""

    only: str
    code: str
    detail: str


@dataclass(frozen=True)
class StateMachine:
    name: str
    table: Mapping[str, frozenset[str]]
    initial: str
    guards: Mapping[tuple[str, str], Guard] = field(default_factory=dict)
    # (destination, actor kind) -> the sources that kind may move a row from, computed at declaration;
    # the kind None stands for every actor no guard names.
    _sources: dict[tuple[str, str | None], frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def declare(
        cls, name: str, initial: str, table: Mapping[str, Iterable[str]],
        guards: Mapping[tuple[str, str], Guard] | None = None,
    ) -> "StateMachine":
        frozen = {src: frozenset(dsts) for src, dsts in table.items()}
        guards = dict(guards or {})
        for src, dst in guards:
            if dst not in frozen.get(src, frozenset()):
                raise ValueError(f"{name}: the guard on {src} -> {dst} guards no edge of the table.")
        kinds: set[str | None] = {None, *(guard.only for guard in guards.values())}
        sources: dict[tuple[str, str | None], set[str]] = {}
        for src, dsts in frozen.items():
            for dst in dsts:
                guard = guards.get((src, dst))
                for kind in kinds:
                    if guard is None or guard.only == kind:
                        sources.setdefault((dst, kind), set()).add(src)
        return cls(name, frozen, initial, guards, {key: frozenset(s) for key, s in sources.items()})

    @property
    def states(self) -> frozenset[str]:
        every = set(self.table)
        for dsts in self.table.values():
            every |= dsts
        return frozenset(every)

    @property
    def terminal(self) -> frozenset[str]:
        return frozenset(s for s in self.states if not self.table.get(s))

    def can(self, src: str, dst: str) -> bool:
        """Whether the table has the edge (for some actor: see `refusal` for who may take it)."""
        return dst in self.table.get(src, frozenset())

    def sources_of(self, dst: str, actor: str | None = None) -> frozenset[str]:
        """The states the actor kind `actor` may move a row to `dst` from: the edges into it that no
        guard closes to it (None: an actor no guard names)."""
        kind = actor if any(guard.only == actor for guard in self.guards.values()) else None
        return self._sources.get((dst, kind), frozenset())

    def sources_of_any(self) -> frozenset[str]:
        """Every state some transition leads to."""
        return frozenset(dst for dsts in self.table.values() for dst in dsts)

    def refusal(self, src: str, dst: str, actor: str | None) -> Guard | None:
        """The guard that closes the edge src -> dst to the actor kind `actor`, or None when it may take it."""
        guard = self.guards.get((src, dst))
        return guard if guard is not None and guard.only != actor else None

    def edges_only_for(self, actor: str) -> frozenset[tuple[str, str]]:
        """The edges a guard reserves for the actor kind `actor`."""
        return frozenset(edge for edge, guard in self.guards.items() if guard.only == actor)

    def check(self, src: str, dst: str, *, version: int | None = None) -> None:
        if not self.can(src, dst):
            raise ConflictError(
                f"{self.name}: {src} -> {dst} is not a legal transition.",
                code="illegal_transition",
                current_status=src,
                current_version=version,
            )


def cas_transition(
    # Any model with a status and a version column (every model a StateMachine moves).
    queryset: models.QuerySet[Any],
    *,
    pk: Any,
    machine: StateMachine,
    to: str,
    expected_version: int | None,
    extra_filter: Q | None = None,
    updates: Mapping[str, Any] | None = None,
    actor: str | None = None,
    extra_refusal: Callable[[str, int], Exception] | None = None,
) -> int:
    """Move one row to `to` if it is in a legal source state and at `expected_version`; its new version.

    See `cas_transition_row`, which this is.
    """
    row = cas_transition_row(queryset, pk=pk, machine=machine, to=to, expected_version=expected_version,
                             extra_filter=extra_filter, updates=updates, actor=actor, extra_refusal=extra_refusal)
    version: int = row.version
    return version


def cas_transition_row(
    queryset: models.QuerySet[_M],
    *,
    pk: Any,
    machine: StateMachine,
    to: str,
    expected_version: int | None,
    extra_filter: Q | None = None,
    updates: Mapping[str, Any] | None = None,
    actor: str | None = None,
    wrap: Callable[[str, list[Any]], tuple[str, list[Any]]] | None = None,
    extra_refusal: Callable[[str, int], Exception] | None = None,
) -> _M:
    """Move one row to `to` if it is in a legal source state and at `expected_version`; the row as written.

    1. One UPDATE filtered on id, the source states the table opens to the actor kind `actor` (None:
       an actor no guard names) and the expected version (when given), bumping version by one and
       applying `updates` in the same statement. It returns the written row (RETURNING), so a
       transition is one round trip and the caller needs no re-read.
    2. If it touched no row, read the row once to say why: missing (404), illegal from its current
       state, closed to this actor by the table's guard, or a stale version (all three 409
       ConflictError carrying the current status and version). When `extra_refusal` is given and the row
       fails `extra_filter`, that refusal is raised (given the current status and version) before the version
       is compared: the cause the extra condition names (a lost lease: runs_app.fencing) is the one code its
       caller gets, whatever version it sent.

    `queryset` is the tenant-scoped manager or queryset, so a row of another project is "missing".
    `extra_filter` adds a condition of this one write (a lease owner, say) that must also hold.
    `wrap` takes the compiled `UPDATE ... RETURNING` and its parameters and returns the statement to run
    instead (a CTE that writes more rows with it, say), which must answer the written row as the UPDATE does:
    what else a transition writes goes in the same round trip.
    """
    sources = machine.sources_of(to, actor)
    filters = Q(pk=pk, status__in=sources)
    if expected_version is not None:
        filters &= Q(version=expected_version)
    if extra_filter is not None:
        filters &= extra_filter
    values: dict[str, Any] = {"status": to, "version": F("version") + 1, **(updates or {})}
    if _has_field(queryset.model, "updated_at") and "updated_at" not in values:
        values["updated_at"] = timezone.now()
    row = _update_returning(queryset, pk, filters, values, wrap)
    if row is not None:
        return row
    current = queryset.filter(pk=pk).values("status", "version").first()
    if current is None:
        raise NotFoundError(f"{machine.name} {pk} does not exist.")
    if not machine.can(current["status"], to):
        machine.check(current["status"], to, version=current["version"])
    guard = machine.refusal(current["status"], to, actor)
    if guard is not None:
        raise ConflictError(guard.detail, code=guard.code, current_status=current["status"],
                            current_version=current["version"])
    if (extra_filter is not None and extra_refusal is not None
            and not queryset.filter(Q(pk=pk) & extra_filter).exists()):
        raise extra_refusal(current["status"], current["version"])
    if expected_version is not None and current["version"] != expected_version:
        raise ConflictError(
            f"{machine.name} {pk} is at version {current['version']}, not {expected_version}.",
            code="version_conflict",
            current_status=current["status"],
            current_version=current["version"],
        )
    raise ConflictError(
        f"{machine.name} {pk}: a guard on this transition does not hold.",
        code="guard_failed",
        current_status=current["status"],
        current_version=current["version"],
    )


def _update_returning(
    queryset: models.QuerySet[_M], pk: Any, filters: Q, values: dict[str, Any],
    wrap: Callable[[str, list[Any]], tuple[str, list[Any]]] | None = None,
) -> _M | None:
    """Apply `values` to the one row `filters` selects; that row as written, or None if none matched.

    The statement `QuerySet.update()` would run, compiled by Django, with a RETURNING clause for
    every column (given to `wrap` first, when there is one).
    """
    # chain(klass) returns an instance of klass; django-stubs type its result as the base Query.
    query = cast(UpdateQuery, queryset.filter(filters).query.chain(UpdateQuery))
    query.add_update_values(values)
    query.annotations = {}
    try:
        sql, params = query.get_compiler(queryset.db).as_sql()
    except EmptyResultSet:  # a filter no row can match (no legal source state, say): what update() returns 0 for
        return None
    statement, arguments = f"{sql} {returning(queryset.model)}", list(params)
    if wrap is not None:
        statement, arguments = wrap(statement, arguments)
    return fetch_instance(queryset.model, statement, arguments)


def _has_field(model: type[models.Model], name: str) -> bool:
    try:
        model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return True
