"""The demo memory `load_demo` loads: written through the services, one fact superseded, idempotent."""

import pytest

from demo.memory import load_demo_memory
from memory_app.models import MemoryRecord
from memory_app.selectors import memory_chain

pytestmark = pytest.mark.django_db


def test_demo_memory_has_a_superseded_fact_and_loads_once(project, run):
    load_demo_memory(project=project, session_id=run.session_id, run_id=run.pk)
    load_demo_memory(project=project, session_id=run.session_id, run_id=run.pk)

    assert MemoryRecord.objects.filter(project=project).count() == 4
    old = MemoryRecord.objects.get(status="superseded")
    chain = memory_chain(project=project, record_id=old.pk)
    assert [r.content for r in chain.after] == ["The lighthouse keeper is called Tomás Ferreira; he is sixty-one."]
