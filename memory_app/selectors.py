"""Read queries over memory, for the API, the console and the services.

A door's read (a list, a record) takes `project_ids`, the ids of the projects the caller may see, and
starts from `MemoryRecord.objects.for_projects`: another project's record is absent (NotFoundError, a
404 at every door); list filters are FilterSets (memory_app.filters) the views apply to `memory_list`.
The rest works inside one project the caller has already been found to see (`project`): retrieval
returns only what is active, fresh and in the asked-for scope.
"""

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import connection
from django.db.models import BooleanField, CharField, Count, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Collate
from django.utils import timezone

from harness.http.errors import NotFoundError, ValidationFailed
from harness.models import Project
from memory_app.models import ContextSnapshot, MemoryRecord, MemoryScope, MemoryStatus
from memory_app.scoping import MemoryCaller
from runs_app.models import Run

MAX_K = 100
FTS_CONFIG = "english"


def memory_records(*, project: Project | int) -> QuerySet[MemoryRecord]:
    """One project's records, for the work inside it (retrieval, chains, conflicts, the services)."""
    project_id = project if isinstance(project, int) else project.pk
    return MemoryRecord.objects.filter(project_id=project_id)


def visible_records(*, project_ids: Sequence[int], caller: MemoryCaller | None = None) -> QuerySet[MemoryRecord]:
    """The records of the caller's projects it may see: for an agent token, not another agent's scope; for a
    token narrowed to an end user, that user's scopes and the shared ones (memory_app.scoping)."""
    records = MemoryRecord.objects.for_projects(project_ids)
    if caller is None:
        return records
    match = Q(pk__in=[])
    for project_id in project_ids:
        match |= Q(project_id=project_id) & caller.readable(project_id)
    return records.filter(match)


def memory_list(*, project_ids: Sequence[int], caller: MemoryCaller | None = None) -> QuerySet[MemoryRecord]:
    """The curation list: every status, newest first."""
    return (
        visible_records(project_ids=project_ids, caller=caller).select_related("project", "source_person")
        .order_by("-created_at", "-id")
    )


def memory_get(*, project_ids: Sequence[int], record_id: int, caller: MemoryCaller | None = None) -> MemoryRecord:
    record = (
        visible_records(project_ids=project_ids, caller=caller).filter(pk=record_id)
        .select_related("project", "source_person", "source_run", "superseded_by")
        .first()
    )
    if record is None:
        raise NotFoundError(f"Memory record {record_id} does not exist.")
    return record


def memory_held(*, project_ids: Sequence[int]) -> QuerySet[MemoryRecord]:
    """Records the policy held for review, oldest first (a queue)."""
    return (
        MemoryRecord.objects.for_projects(project_ids).filter(status=MemoryStatus.HELD)
        .select_related("project", "source_person", "source_run").order_by("created_at", "id")
    )


def held_count(*, project_ids: Sequence[int]) -> int:
    return MemoryRecord.objects.for_projects(project_ids).filter(status=MemoryStatus.HELD).count()


def fresh_q(now: dt.datetime) -> Q:
    """Not expired and not past its validity: stale records are kept but not handed out."""
    return (Q(expires_at__isnull=True) | Q(expires_at__gt=now)) & (Q(valid_until__isnull=True) | Q(valid_until__gt=now))


def is_fresh(record: MemoryRecord, *, now: dt.datetime | None = None) -> bool:
    now = now or timezone.now()
    return not (
        (record.expires_at is not None and record.expires_at <= now)
        or (record.valid_until is not None and record.valid_until <= now)
    )


def memory_retrieve(
    *,
    project: Project | int,
    scope: str,
    scope_key: str = "",
    query: str | None = None,
    k: int = 10,
    now: dt.datetime | None = None,
    any_term: bool = False,
) -> list[MemoryRecord]:
    """Retrieval on demand: one scope (required), optional full-text query, fresh only, top-k.

    `any_term` matches records sharing any word with the query (for relevance to a run's objective)
    instead of the websearch syntax, where plain words must all match.

    1. Filter on project, scope and scope key, status active, and freshness at `now`.
    2. With a query, match it with PostgreSQL full-text search (websearch syntax) and rank by
       relevance, then recency; without one, the most recently confirmed or created first.
    3. Return at most `k` records.
    """
    return list(_retrieval(project, scope, scope_key, query, k, now or timezone.now(), any_term)[:k])


def memory_retrieve_scopes(
    *,
    project: Project | int,
    scopes: Sequence[tuple[str, str]],
    query: str | None = None,
    k: int = 10,
    any_term: bool = False,
) -> list[MemoryRecord]:
    """`memory_retrieve` for each (scope, scope key) at once: each scope's top k, in the order given.

    One statement on PostgreSQL (UNION ALL of each scope's own ordered, limited query, so each is
    still found through its scope's index) instead of one round trip and one compiled query each.
    """
    now = timezone.now()
    parts = [_retrieval(project, scope, key, query, k, now, any_term) for scope, key in scopes]
    if len(parts) < 2 or not connection.features.supports_slicing_ordering_in_compound:
        return [record for part in parts for record in part[:k]]
    # Each part numbered, so the union can be ordered as asked: by part, then as each part was.
    order = parts[0].query.order_by
    numbered = [part.annotate(part=Value(n))[:k] for n, part in enumerate(parts)]
    return list(numbered[0].union(*numbered[1:], all=True).order_by("part", *order))


def _retrieval(
    project: Project | int, scope: str, scope_key: str, query: str | None, k: int, now: dt.datetime, any_term: bool
) -> QuerySet[MemoryRecord]:
    if scope not in MemoryScope.values:
        raise ValidationFailed(f"scope is one of {', '.join(MemoryScope.values)}.", code="invalid_scope")
    if scope != MemoryScope.PROJECT and not scope_key:
        raise ValidationFailed(f"A {scope} scope needs its scope_key.", code="scope_key_required")
    if scope == MemoryScope.PROJECT:
        scope_key = ""
    if not 1 <= k <= MAX_K:
        raise ValidationFailed(f"k is between 1 and {MAX_K}.", code="invalid_k")
    records = memory_records(project=project).filter(
        fresh_q(now), scope=scope, scope_key=scope_key, status=MemoryStatus.ACTIVE
    )
    query = (query or "").strip()
    if query:
        return _text_match(records, query, any_term=any_term, scope_first=True)
    return records.order_by("-last_confirmed_at", "-created_at", "-id")


def _text_match(
    records: QuerySet[MemoryRecord], query: str, *, any_term: bool = False, scope_first: bool = False
) -> QuerySet[MemoryRecord]:
    terms = re.findall(r"\w+", query)[:50]
    if any_term:
        query = " OR ".join(terms)
    from django.contrib.postgres.search import SearchConfig, SearchQuery, SearchRank, SearchVector, SearchVectorField
    from django.db.models import F, Func

    if scope_first:
        # One scope's records, found by the (project, scope, scope_key, status) index, are matched
        # row by row: the cost follows the scope's size. Given the GIN index's expression, the planner
        # ANDs the scope with every match of the words in the whole table (1,000 -> 1,000,000 records:
        # 2.2x slower); this expression (content is NOT NULL, so no COALESCE) keeps it off that plan.
        vector: Func = Func(
            SearchConfig(FTS_CONFIG), F("content"), function="to_tsvector", output_field=SearchVectorField()
        )
    else:
        # The same expression as the GIN index built in migration 0003, so the planner can use it.
        vector = SearchVector("content", config=FTS_CONFIG)
    search = SearchQuery(query, config=FTS_CONFIG, search_type="websearch")
    return (
        records.alias(search=vector)  # matched on, not returned: no tsvector per row sent back
        .filter(search=search)
        .annotate(rank=SearchRank(vector, search))
        .order_by("-rank", "-created_at", "-id")
    )


@dataclass(frozen=True)
class Chain:
    """A record's versions: `before` oldest first, then the record, then `after` newest last."""

    record: MemoryRecord
    before: list[MemoryRecord]
    after: list[MemoryRecord]

    @property
    def versions(self) -> list[MemoryRecord]:
        return [*self.before, self.record, *self.after]


MAX_CHAIN = 200


def memory_chain(*, project: Project | int, record_id: int) -> Chain:
    """Walk the supersede links both ways from one record (bounded, one query per step).

    Backwards every record that led here (a resolved conflict merges two lines into one);
    forwards the single line of successors.
    """
    record = memory_get(project_ids=[project if isinstance(project, int) else project.pk], record_id=record_id)
    records = memory_records(project=project).select_related("source_person")
    before: list[MemoryRecord] = []
    frontier = [record.pk]
    while frontier and len(before) < MAX_CHAIN:
        older = list(records.filter(superseded_by_id__in=frontier).order_by("created_at", "id"))
        before = older + before
        frontier = [r.pk for r in older]
    after: list[MemoryRecord] = []
    successor_id = record.superseded_by_id
    while successor_id is not None and len(after) < MAX_CHAIN:
        successor = records.filter(pk=successor_id).first()
        if successor is None:
            break
        after.append(successor)
        successor_id = successor.superseded_by_id
    before.sort(key=lambda r: (r.created_at, r.pk))
    return Chain(record=record, before=before, after=after)


@dataclass(frozen=True)
class Conflict:
    scope: str
    scope_key: str
    subject: str
    records: list[MemoryRecord]


def memory_conflicts(
    *, project: Project | int, scope: str | None = None, scope_key: str | None = None,
    caller: MemoryCaller | None = None,
) -> list[Conflict]:
    """Active records of the same subject and scope with different content, grouped (two queries); of the scopes
    the caller may see."""
    project_id = project if isinstance(project, int) else project.pk
    active = memory_records(project=project).filter(status=MemoryStatus.ACTIVE).exclude(subject="")
    if caller is not None:
        active = active.filter(caller.readable(project_id))
    if scope:
        active = active.filter(scope=scope)
    if scope_key:
        active = active.filter(scope_key=scope_key)
    groups = list(
        active.values("scope", "scope_key", "subject")
        .annotate(n=Count("content_hash", distinct=True))
        .filter(n__gt=1)
        .order_by("scope", "scope_key", "subject")[:500]
    )
    if not groups:
        return []
    match = Q()
    for group in groups:
        match |= Q(scope=group["scope"], scope_key=group["scope_key"], subject=group["subject"])
    by_key: dict[tuple[str, str, str], list[MemoryRecord]] = {}
    for record in active.filter(match).select_related("source_person").order_by("created_at", "id"):
        by_key.setdefault((record.scope, record.scope_key, record.subject), []).append(record)
    return [Conflict(scope=s, scope_key=k, subject=subj, records=rs) for (s, k, subj), rs in by_key.items()]


def memory_conflicts_of(*, project: Project | int, record: MemoryRecord) -> list[MemoryRecord]:
    """The other active records this one conflicts with (same subject and scope, other content)."""
    if not record.subject:
        return []
    return list(
        memory_records(project=project)
        .filter(status=MemoryStatus.ACTIVE, scope=record.scope, scope_key=record.scope_key, subject=record.subject)
        .exclude(content_hash=record.content_hash)
        .exclude(pk=record.pk)
        .order_by("created_at", "id")
    )


def context_snapshots(*, project: Project | int, run_id: int) -> QuerySet[ContextSnapshot]:
    project_id = project if isinstance(project, int) else project.pk
    return ContextSnapshot.objects.filter(project_id=project_id, run_id=run_id)


def context_snapshot_get(*, project: Project | int, snapshot_id: int) -> ContextSnapshot:
    project_id = project if isinstance(project, int) else project.pk
    snapshot = ContextSnapshot.objects.filter(project_id=project_id, pk=snapshot_id).first()
    if snapshot is None:
        raise NotFoundError(f"Context snapshot {snapshot_id} does not exist.")
    return snapshot


def run_context_snapshots(run: Run, limit: int = 10) -> list[ContextSnapshot]:
    """What was handed to the model for this run, newest first (recorded by memory's context projection): what
    the run inspector's `snapshots` panel shows (memory_app.inspector_panel)."""
    return list(
        ContextSnapshot.objects.filter(project_id=run.project_id, run=run).order_by("-created_at", "-id")[:limit]
    )


# --- the LangGraph store's reads (memory_app.store_keys; harness_client.langgraph_store) ------------------------

MAX_STORE_LIMIT = 1000
MAX_FILTER_TERMS = 50
_FILTER_OPERATORS = {"$eq": "exact", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


def _store_visible(project_id: int, caller: MemoryCaller | None, labels: Sequence[str]) -> QuerySet[MemoryRecord]:
    """The active, fresh store items of the caller's scopes under the namespace prefix `labels`. A prefix that names
    a scope key is read_key's to allow (403 for another agent's or, narrowed, another user's); a shorter one is
    confined to what the caller may read."""
    records = memory_records(project=project_id).filter(fresh_q(timezone.now()), status=MemoryStatus.ACTIVE) \
        .exclude(key="")
    if caller is not None:
        records = records.filter(caller.readable(project_id))
    if labels and labels[0] in MemoryScope.values:
        records = records.filter(scope=labels[0])
        if labels[0] != MemoryScope.PROJECT and len(labels) > 1:
            if caller is not None:
                caller.read_key(project_id, labels[0], labels[1])
            records = records.filter(scope_key=labels[1])
    elif labels:
        return records.none()
    if labels:
        prefix = RawSQL(  # noqa: S611 - the model's own table name, bound values
            f'{MemoryRecord._meta.db_table}."namespace"[1:%s] = %s::varchar[]', (len(labels), list(labels)),
            output_field=BooleanField())
        records = records.alias(_prefix=prefix).filter(_prefix=True)
    return records


def store_get(*, project: Project | int, caller: MemoryCaller | None, namespace: Sequence[str],
              key: str) -> MemoryRecord | None:
    """The active, fresh record under (namespace, key), or None."""
    project_id = project if isinstance(project, int) else project.pk
    return _store_visible(project_id, caller, namespace).filter(namespace=list(namespace), key=key).first()


def _filtered(records: QuerySet[MemoryRecord], filters: dict[str, Any]) -> QuerySet[MemoryRecord]:
    """LangGraph's filter on value fields: {"field": value} (equal; a nested object compares field by field), or
    {"field": {"$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte": value}} (an order compares jsonb values: numbers
    as numbers)."""
    terms: list[tuple[tuple[str, ...], str, Any]] = []

    def walk(path: tuple[str, ...], wanted: Any) -> None:
        if isinstance(wanted, dict) and any(str(k).startswith("$") for k in wanted):
            for op, operand in wanted.items():
                if op not in _FILTER_OPERATORS:
                    raise ValidationFailed(f"A filter's operators are {', '.join(_FILTER_OPERATORS)}.",
                                           code="invalid_filter")
                terms.append((path, _FILTER_OPERATORS[op], operand))
        elif isinstance(wanted, dict):
            for name, inner in wanted.items():
                walk((*path, str(name)), inner)
        else:
            terms.append((path, "exact", wanted))

    for name, wanted in filters.items():
        walk((str(name),), wanted)
    if len(terms) > MAX_FILTER_TERMS:
        raise ValidationFailed(f"A filter has at most {MAX_FILTER_TERMS} terms.", code="invalid_filter")
    for n, (path, lookup, operand) in enumerate(terms):
        field: Any = "value"
        for name in path:
            field = KeyTransform(name, field)
        alias = f"_f{n}"
        records = records.alias(**{alias: field})
        if lookup == "ne":  # as LangGraph's: a missing field differs from any value
            records = records.filter(~Q(**{alias: operand}) | Q(**{f"{alias}__isnull": True}))
        elif lookup == "exact" and operand is None:  # as LangGraph's: a missing field is None
            records = records.filter(Q(**{alias: None}) | Q(**{f"{alias}__isnull": True}))
        elif lookup == "exact":
            records = records.filter(**{alias: operand})
        else:
            if isinstance(operand, bool) or not isinstance(operand, int | float):
                raise ValidationFailed("An order ($gt, $gte, $lt, $lte) compares numbers.", code="invalid_filter")
            records = records.filter(**{f"{alias}__{lookup}": operand})
    return records


def store_search(
    *, project: Project | int, caller: MemoryCaller | None, namespace_prefix: Sequence[str], query: str = "",
    filters: dict[str, Any] | None = None, limit: int = 10, offset: int = 0,
) -> list[MemoryRecord]:
    """Items under a namespace prefix, filtered on their values; with `query`, those matching it in full text
    (websearch syntax over the value's JSON text, the index memory retrieval uses), best first (`rank`), else the
    most recently written first. One page: `limit` from `offset`."""
    if not 1 <= limit <= MAX_STORE_LIMIT or offset < 0:
        raise ValidationFailed(f"limit is between 1 and {MAX_STORE_LIMIT}, offset at least 0.", code="invalid_page")
    project_id = project if isinstance(project, int) else project.pk
    records = _filtered(_store_visible(project_id, caller, namespace_prefix), filters or {})
    ordered = _text_match(records, query) if (query or "").strip() else records.order_by("-updated_at", "-id")
    return list(ordered[offset:offset + limit])


def store_namespaces(
    *, project: Project | int, caller: MemoryCaller | None, prefix: Sequence[str] = (), suffix: Sequence[str] = (),
    max_depth: int | None = None, limit: int = 100, offset: int = 0,
) -> list[list[str]]:
    """The namespaces holding items the caller can read, matching `prefix` and `suffix` ("*": any one label), cut
    to `max_depth` labels, in order (label by label, by code point, as Python sorts tuples), one page."""
    if not 1 <= limit <= MAX_STORE_LIMIT or offset < 0 or (max_depth is not None and max_depth < 1):
        raise ValidationFailed(f"limit is between 1 and {MAX_STORE_LIMIT}, offset at least 0, max_depth at least 1.",
                               code="invalid_page")
    project_id = project if isinstance(project, int) else project.pk
    table = MemoryRecord._meta.db_table
    fixed = tuple(prefix[:next((i for i, label in enumerate(prefix) if label == "*"), len(prefix))])
    records = _store_visible(project_id, caller, fixed)
    conditions: list[str] = []
    params: list[Any] = []
    for i, label in enumerate(prefix):
        if label != "*":
            conditions.append(f'{table}."namespace"[%s] = %s')
            params += [i + 1, label]
    for i, label in enumerate(reversed(suffix)):
        if label != "*":
            conditions.append(f'{table}."namespace"[cardinality({table}."namespace") - %s] = %s')
            params += [i, label]
    conditions.append(f'cardinality({table}."namespace") >= %s')
    params.append(max(len(prefix), len(suffix)))
    match = RawSQL(" AND ".join(conditions), params, output_field=BooleanField())  # noqa: S611 - constant parts, bound values
    records = records.alias(_match=match).filter(_match=True)
    depth = max_depth or 20  # memory_app.store_keys.MAX_DEPTH: no namespace is deeper
    cut = RawSQL(f'({table}."namespace"[1:%s])::varchar[]', (depth,),  # noqa: S611 - the table name, a bound depth
                 output_field=ArrayField(CharField()))
    rows = records.annotate(ns=Collate(cut, "C")).values_list("ns", flat=True).distinct().order_by("ns")
    return [list(ns) for ns in rows[offset:offset + limit]]
