"""The memory app's count for the console's overview (read by console.context_processors)."""

from collections.abc import Sequence

from memory_app.selectors import held_count


def held_records(project_ids: Sequence[int]) -> int:
    """Memory records a write policy held for an operator's review."""
    return held_count(project_ids=project_ids)
