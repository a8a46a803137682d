"""Reads of checkpoints: one, its children, a run's latest, its lineage (as the API's JSON, written by
PostgreSQL) and the bounded window of a run's or task's checkpoint tree the lineage page draws
(runs_app.presentation.lineage lays it out).

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from harness.db import api_time_sql, columns, fetch_instance, fetch_json_text, id_list, id_list_sql, json_rows
from harness.http.auth import CALLER_HOLDS, CALLER_SQL, TokenCheck, caller_params
from harness.http.errors import NotFoundError
from harness.models import Project
from runs_app.models import Checkpoint, Run, Task

MAX_LINEAGE = 1000


def checkpoint_list(*, project_ids: Sequence[int]) -> QuerySet[Checkpoint]:
    return Checkpoint.objects.for_projects(project_ids)


def checkpoint_get(*, project_ids: Sequence[int], checkpoint_id: int) -> Checkpoint:
    checkpoint = checkpoint_list(project_ids=project_ids).filter(pk=checkpoint_id).first()
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return checkpoint


def checkpoint_detail(*, project_ids: Sequence[int], checkpoint_id: int) -> Checkpoint:
    """A checkpoint with its owners, parent and approval, for its page and the diff."""
    checkpoint = (
        checkpoint_list(project_ids=project_ids).filter(pk=checkpoint_id)
        .select_related("project", "run", "task", "parent", "approval")
        .first()
    )
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return checkpoint


def checkpoint_children(*, project_ids: Sequence[int], checkpoint: Checkpoint) -> QuerySet[Checkpoint]:
    """The checkpoints whose parent is `checkpoint`, in any run of the project: its successor and its forks."""
    return (Checkpoint.objects.for_projects(project_ids).filter(parent=checkpoint)
            .only("id", "label", "run_id", "task_id", "depth", "created_at").order_by("id")[:100])


def checkpoint_latest(*, project: Project | int, run_id: int) -> Checkpoint | None:
    """The run's newest checkpoint through its `last_checkpoint` pointer: two primary-key lookups, in one
    statement, however long the run's history (None for a run with no checkpoint yet)."""
    project_id = project if isinstance(project, int) else project.pk
    # The row straight into the model (what raw() does, minus its per-query column mapping: a third of
    # this read's CPU).
    checkpoint = fetch_instance(Checkpoint, _LATEST_CHECKPOINT_SQL.format(columns=columns(Checkpoint, "c")),
                                {"run": run_id, "project": project_id})
    if checkpoint is None and not Run.objects.filter(project_id=project_id, pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    return checkpoint


_LATEST_CHECKPOINT_SQL = """
SELECT {columns} FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id
 WHERE r.id = %(run)s AND r.project_id = %(project)s AND c.project_id = %(project)s
"""


# The API's checkpoint fields (runs_app.api.checkpoints.CheckpointOutSerializer) in its order, each with its column.
LINEAGE_FIELDS = (
    ("id", "id"), ("run", "run_id"), ("task", "task_id"), ("parent", "parent_id"), ("depth", "depth"),
    ("label", "label"), ("cursor", "cursor"), ("state", "state"), ("artifact_fingerprints", "artifact_fingerprints"),
    ("authority_ref", "authority_ref"), ("pending_gate", "pending_gate"), ("approval", "approval_id"),
    ("resume_policy", "resume_policy"), ("schema_version", "schema_version"), ("content_hash", "content_hash"),
)


def _json_member(name: str, column: str, kind: str) -> str:
    value = {"int": f"c.{column}::text", "text": f"to_json(c.{column})::text", "json": f"c.{column}::text"}[kind]
    return f"""'"{name}":' || coalesce({value}, 'null')"""


_LINEAGE_KINDS = {"label": "text", "authority_ref": "text", "resume_policy": "text", "content_hash": "text",
                  "cursor": "json", "state": "json", "artifact_fingerprints": "json", "pending_gate": "json"}


# The walk up the parents (primary key) and the rows in one statement, each row written as the JSON
# object the API returns (the json columns as their text, concatenated: aggregating with json_agg and
# json_build_object cost the server three times as much) so that one json.loads decodes the chain. The
# columns are json, not jsonb (harness.fields.TextJSONField, migration 0024): a json value's text is a copy,
# where jsonb's is written out again (-28% of this statement's server time for 1,000 ~1 KB states).
# Building 1,000 model instances and decoding their 4,000 JSON values one by one cost three times
# the CPU. The time comes apart, as epoch microseconds: parsing 1,000 timestamps was another third.
# The start must be in the caller's projects and the walk stays in its project: no separate lookup of
# the start first. S608: the text put in is this module's constant column list (LINEAGE_FIELDS); every
# value is a bound parameter.
_LINEAGE_WALK = f"""
WITH RECURSIVE {CALLER_SQL}, chain(id, parent_id, project_id, hops) AS (
    SELECT id, parent_id, project_id, 0 FROM runs_app_checkpoint
     WHERE id = %(start)s AND project_id = ANY({id_list_sql('pids')}) AND {CALLER_HOLDS}
    UNION ALL
    SELECT c.id, c.parent_id, c.project_id, chain.hops + 1
      FROM runs_app_checkpoint c JOIN chain ON c.id = chain.parent_id AND c.project_id = chain.project_id
     WHERE chain.hops < %(hops)s
)
"""  # noqa: S608 - harness.http.auth's own SQL; every value is a bound parameter


_LINEAGE_MEMBERS = " || ',' || ".join(
    _json_member(name, column, _LINEAGE_KINDS.get(name, "int")) for name, column in LINEAGE_FIELDS)


_LINEAGE_SQL = _LINEAGE_WALK + f"""
SELECT '{{' || {_LINEAGE_MEMBERS} || '}}', (extract(epoch FROM c.created_at) * 1000000)::bigint
  FROM chain JOIN runs_app_checkpoint c ON c.id = chain.id
 ORDER BY c.depth DESC, c.id DESC
"""  # noqa: S608


# For the API: the whole answer as one JSON text, `created_at` rendered as DRF renders it, which the view sends
# as it comes (no decode, no encode in Python: issue 14). The array's brackets are pieces of the aggregate (the
# start's object begins with '[', a last piece ']' has no separator before it) rather than concatenated around
# the megabyte-long result, which copied it twice more (9% of the statement's server time). The pieces are in
# the walk's order (`hops`), newest first: a child's depth is its parent's plus one, so it is the order of
# depth DESC. NULL when the start is not found (no chain, no closing piece).
_LINEAGE_JSON_SQL = _LINEAGE_WALK + """
SELECT string_agg(piece, separator ORDER BY hops) FROM (
    SELECT CASE WHEN chain.hops = 0 THEN '[{{' ELSE '{{' END || {members} || ',"created_at":' || {created} || '}}'
           AS piece, ',' AS separator, chain.hops
      FROM chain JOIN runs_app_checkpoint c ON c.id = chain.id
    UNION ALL
    SELECT ']', '', 2147483647 WHERE EXISTS (SELECT 1 FROM chain)
) pieces
""".format(members=_LINEAGE_MEMBERS, created=api_time_sql("c.created_at"))  # noqa: S608 - the module's own SQL


def checkpoint_lineage(*, project_ids: Sequence[int], checkpoint_id: int) -> list[dict[str, Any]]:
    """The checkpoint and its ancestors, newest first (capped at MAX_LINEAGE), as dicts shaped like the
    API's checkpoints (`created_at` a datetime)."""
    with connection.cursor() as cursor:
        cursor.execute(_LINEAGE_SQL, _lineage_params(project_ids, checkpoint_id, None))
        rows = cursor.fetchall()
    if not rows:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return json_rows(rows)


def _lineage_params(project_ids: Sequence[int], checkpoint_id: int, caller: TokenCheck | None) -> dict[str, Any]:
    return {"start": checkpoint_id, "pids": id_list(project_ids), "hops": MAX_LINEAGE - 1, **caller_params(caller)}


def checkpoint_lineage_json(*, project_ids: Sequence[int], checkpoint_id: int, caller: TokenCheck | None = None
                            ) -> bytes:
    """`checkpoint_lineage` as the API's JSON text (created_at rendered), written by PostgreSQL. With a `caller` (the
    plain path's harness.http.auth.TokenCheck), NotFoundError also when the caller's token does not hold."""
    body = fetch_json_text(_LINEAGE_JSON_SQL, _lineage_params(project_ids, checkpoint_id, caller))
    if body is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return body


# How many checkpoints the lineage page draws: the newest ones (the head and its recent ancestors
# and siblings); older ones are a link away, so the page costs the same however long the history.
LINEAGE_WINDOW = 200


def lineage_checkpoints(
    *, project_ids: Sequence[int], run: Run | None = None, task: Task | None = None, before: int | None = None
) -> QuerySet[Checkpoint]:
    """The owner's checkpoints newest first (served by the (run, -id) and (task, -id) indexes);
    `before`: only those older than that id, for the page's "older" link."""
    qs = Checkpoint.objects.for_projects(project_ids)
    qs = qs.filter(run=run) if run is not None else qs.filter(task=task)
    if before is not None:
        qs = qs.filter(id__lt=before)
    return qs.only("id", "parent_id", "label", "depth", "created_at", "run_id", "task_id").order_by("-id")


_LINEAGE_WINDOW_SQL = """
WITH RECURSIVE up(id, parent_id, n) AS (
    SELECT c.id, c.parent_id, 1 FROM runs_app_checkpoint c
     WHERE c.id = COALESCE(%(anchor)s::bigint, (
               SELECT l.id FROM runs_app_checkpoint l WHERE l.{owner} = %(owner)s ORDER BY l.id DESC LIMIT 1))
       AND c.{owner} = %(owner)s AND c.project_id = ANY(%(projects)s)
    UNION ALL
    SELECT c.id, c.parent_id, up.n + 1 FROM runs_app_checkpoint c JOIN up ON c.id = up.parent_id
     WHERE up.n < %(size)s AND c.{owner} = %(owner)s
), top AS (
    SELECT id, parent_id, n FROM up ORDER BY n DESC LIMIT 1
), down(id) AS (
    SELECT id FROM top
    UNION ALL
    -- LATERAL with a LIMIT is not flattened into a join: each step probes the parent index for
    -- one node's children instead of hashing all of the owner's checkpoints on every step. The
    -- children in id order: without it, which siblings fill the window depended on the plan.
    SELECT k.id FROM down, LATERAL (
        SELECT c.id FROM runs_app_checkpoint c WHERE c.parent_id = down.id AND c.{owner} = %(owner)s
         ORDER BY c.id LIMIT %(size)s) AS k
)
SELECT c.id, c.run_id, c.task_id, c.parent_id, c.label, c.depth, c.created_at, r.ref AS run_ref,
       (SELECT CASE WHEN top.n >= %(size)s THEN top.parent_id END FROM top) AS older
  FROM runs_app_checkpoint c
  -- The run's ref in the same statement: the task's lineage names each checkpoint's run.
  LEFT JOIN runs_app_run r ON r.id = c.run_id
 WHERE c.id IN (SELECT id FROM up UNION SELECT id FROM (SELECT id FROM down LIMIT %(size)s) AS d)
 ORDER BY c.id
"""


def lineage_window(
    *, project_ids: Sequence[int], run: Run | None = None, task: Task | None = None, before: int | None = None,
    size: int | None = None,
) -> tuple[list[Checkpoint], int | None]:
    """A bounded window of the owner's checkpoint tree, anchored at its head, in one statement.

    1. Walk up from the anchor (`before`, else the run's latest-checkpoint pointer, else its newest
       checkpoint) through the parents, at most `size` steps: primary-key lookups only.
    2. Walk down from the topmost of those through the children (the parent index), at most `size`
       more, so the branches that fork inside the window are drawn too.
    3. Return the window in id order (each row with its run's `run_ref`) and, when the walk up stopped
       at `size`, the id to continue from for older checkpoints (None: the window reaches the root).
    The cost follows `size`, not the length of the history.
    """
    size = size or LINEAGE_WINDOW
    owner, owner_id = ("run_id", run.pk) if run is not None else ("task_id", task.pk if task else None)
    anchor = before if before is not None else (run.last_checkpoint_id if run is not None else None)
    params = {"anchor": anchor, "owner": owner_id, "projects": list(project_ids), "size": size}
    rows = list(Checkpoint.objects.raw(_LINEAGE_WINDOW_SQL.format(owner=owner), params))
    older: int | None = getattr(rows[0], "older", None) if rows else None
    return rows, older
