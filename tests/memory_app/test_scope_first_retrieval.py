"""A scoped retrieval with a query reads its scope's records first, so its cost follows the scope, not the table."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_app.models import MemoryRecord
from memory_app.policy import content_hash
from memory_app.selectors import memory_retrieve

pytestmark = pytest.mark.django_db


def _fact(project, key: str, text: str) -> MemoryRecord:  # type: ignore[no-untyped-def]
    return MemoryRecord(project=project, scope="agent", scope_key=key, content=text, content_hash=content_hash(text),
                        provenance_kind="told", source_note="agent:writer")


def test_a_scoped_query_is_planned_from_the_scope_index_not_the_text_index(project, other_project) -> None:  # type: ignore[no-untyped-def]
    # The words are everywhere else: a text-index-first plan would read all of these matches.
    MemoryRecord.objects.bulk_create(
        [_fact(p, f"agent-{i % 20}", f"the lighthouse keeper note {i}") for p in (project, other_project)
         for i in range(400)]
        + [_fact(project, "agent-x", "the lighthouse keeper of agent x"), _fact(project, "agent-x", "the lamp")]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_app_memoryrecord")
    with CaptureQueriesContext(connection) as captured:
        found = memory_retrieve(project=project, scope="agent", scope_key="agent-x", query="lighthouse keepers")
    assert [r.content for r in found] == ["the lighthouse keeper of agent x"]
    (query,) = [q["sql"] for q in captured.captured_queries if "memory_app_memoryrecord" in q["sql"]]
    # Not the GIN index's expression (migration 0003 indexes COALESCE(content, '')): the planner cannot
    # AND the scope with every match of the words in the table, whatever its statistics say.
    assert "COALESCE" not in query.upper()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + query)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "memory_content_fts" not in plan
    assert "memory_app__project_482d83_idx" in plan or "scope" in plan.split("Index Cond", 1)[-1]
