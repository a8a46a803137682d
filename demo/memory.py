"""The demo's memory (`load_demo`): a few facts the writer agent kept, one superseded by a newer version."""

from harness.actors import Actor
from harness.models import Project
from memory_app.models import MemoryRecord, MemoryScope
from memory_app.services import memory_supersede, memory_write


def load_demo_memory(*, project: Project, session_id: int, run_id: int) -> None:
    """Write through the services, as the agent would; a second call finds the facts and changes nothing."""
    if MemoryRecord.objects.filter(project=project).exists():
        return
    writer = Actor.for_agent("writer")
    memory_write(
        project=project, actor=writer, scope=MemoryScope.PROJECT, subject="style",
        content="The novel is written in the past tense, third person, close to the keeper.",
        provenance_kind="told", source_run_id=run_id, source_session_id=session_id,
    )
    memory_write(
        project=project, actor=writer, scope=MemoryScope.AGENT, scope_key="writer", subject="chapter length",
        content="Chapters run about 3,000 words.", provenance_kind="inferred", source_run_id=run_id,
    )
    first = memory_write(
        project=project, actor=writer, scope=MemoryScope.PROJECT, subject="lighthouse keeper",
        content="The lighthouse keeper is called Tomas.", provenance_kind="observed", source_run_id=run_id,
    )
    if first.record is None:  # the default policy accepts an agent's observed project fact
        raise RuntimeError(f"the demo's first fact was not stored: {first.code} ({first.reason})")
    memory_supersede(
        project=project, actor=writer, record_id=first.record.pk,
        content="The lighthouse keeper is called Tomás Ferreira; he is sixty-one.", source_run_id=run_id,
    )
