"""Trimming and compacting a session's history through the client, against a live server."""

import pytest
from harness_client import ConflictError, HarnessClient

from sessions_app.models import SessionItem
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


def test_trim_keeps_the_newest_and_compact_replaces_a_range_with_a_summary(live: Live, hc: HarnessClient) -> None:
    session = hc.create_session(role="writer", memory_policy="session", ref="T-1")
    hc.append_items(session.id, [{"role": "user", "content": {"n": n}} for n in range(1, 11)])

    compacted = hc.compact_items(session.id, first_seq=1, last_seq=4, summary={"text": "1-4 in short"})
    assert (compacted.removed, compacted.first_seq, compacted.last_seq) == (4, 1, 4)
    assert compacted.summary is not None and compacted.summary.seq == 4 and compacted.summary.role == "system"
    assert len(compacted.replaced_hash) == 64 and compacted.session_last_seq == 10

    trimmed = hc.trim_items(session.id, keep_last=3, expected_last_seq=10)
    assert (trimmed.removed, trimmed.first_seq, trimmed.last_seq, trimmed.summary) == (4, 4, 7, None)
    seqs = list(SessionItem.objects.filter(session_id=session.id).order_by("seq").values_list("seq", flat=True))
    assert seqs == [8, 9, 10] and hc.get_session(session.id).last_seq == 10

    with pytest.raises(ConflictError) as stale:
        hc.trim_items(session.id, keep_last=1, expected_last_seq=9)
    assert stale.value.code == "seq_conflict"
    with pytest.raises(ConflictError) as empty:
        hc.compact_items(session.id, first_seq=1, last_seq=5, summary="nothing there")
    assert empty.value.code == "empty_range"
