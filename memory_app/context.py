"""The context projection: what a run's model may see, bounded, and the record of exactly what it saw.

A run owns its ContextSnapshot rows (a foreign key to the run, deleted with it; the run inspector shows
them), and the resume worker's `sparse_context` step builds one on every resume. The projection
lives here, in memory_app, because its rules are memory's: which scopes a run may read, freshness,
full-text ranking, and `memory_erase` scrubbing erased content out of every snapshot that holds it.
"""

from typing import Any

from django.db import transaction

from harness.canonical import canonical_json
from harness.errors import NotFoundError, ValidationFailed
from harness.models import Project
from memory_app.models import ContextSnapshot, MemoryScope
from memory_app.selectors import memory_retrieve_scopes
from runs_app.models import Run
from sessions_app.models import SessionItem

MAX_BUDGET_CHARS = 200_000
MEMORY_PER_SCOPE = 20
ITEMS_SCANNED = 500


def context_project(
    *, project: Project | int, run_id: int, budget_chars: int, query: str | None = None
) -> ContextSnapshot:
    """Build and record the bounded context a run's model may see.

    1. Relevant memory: active, fresh records of the project-wide scope, the run's session and its
       active agent (with a `query`, those sharing a word with it, best ranked first; without one,
       the most recent), into at most half the budget.
    2. The session's most recent items, newest first, until the rest of the budget is used; the
       first item that does not fit ends the window so it stays contiguous.
    3. Store exactly what was handed over (ids, seqs and the text) as a ContextSnapshot.
    """
    project_id = project if isinstance(project, int) else project.pk
    if not 1 <= budget_chars <= MAX_BUDGET_CHARS:
        raise ValidationFailed(f"budget_chars is between 1 and {MAX_BUDGET_CHARS}.", code="invalid_budget")
    query = (query or "").strip()[:500]
    run = Run.objects.filter(project_id=project_id, pk=run_id).only("id", "session_id", "active_agent").first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    scopes = [(MemoryScope.PROJECT, ""), (MemoryScope.SESSION, str(run.session_id))]
    if run.active_agent:
        scopes.append((MemoryScope.AGENT, run.active_agent))
    candidates = memory_retrieve_scopes(project=project_id, scopes=scopes, query=query, k=MEMORY_PER_SCOPE,
                                        any_term=True)
    if query:
        candidates.sort(key=lambda r: -float(getattr(r, "rank", 0.0)))
    memory: list[dict[str, Any]] = []
    used = 0
    for record in candidates:
        if used + len(record.content) > budget_chars // 2:
            continue
        used += len(record.content)
        memory.append({
            "id": record.pk, "scope": record.scope, "scope_key": record.scope_key, "subject": record.subject,
            "content": record.content, "provenance_kind": record.provenance_kind,
            "created_at": record.created_at.isoformat(),
        })
    items: list[dict[str, Any]] = []
    recent = SessionItem.objects.filter(session_id=run.session_id).order_by("-seq").only("seq", "role", "content")
    for item in recent[:ITEMS_SCANNED]:
        text = _item_text(item.content)
        if used + len(text) > budget_chars:
            break
        used += len(text)
        items.append({"seq": item.seq, "role": item.role, "text": text})
    items.reverse()
    # One INSERT: no savepoint needed when the resume worker calls this inside its transaction.
    with transaction.atomic(savepoint=False):
        return ContextSnapshot.objects.create(
            project_id=project_id, run_id=run.pk, item_seqs=[i["seq"] for i in items],
            memory_ids=[m["id"] for m in memory], query=query, budget_chars=budget_chars, used_chars=used,
            content={"run": run.pk, "session": run.session_id, "query": query, "memory": memory, "items": items},
        )


def _item_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
    return canonical_json(content)
