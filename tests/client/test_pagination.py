"""Cursor pagination as iteration, and the seq-positioned reads (newest N, after a seq), live."""

import pytest
from harness_client import HarnessClient

from tests.client.conftest import Live, Recorder

pytestmark = pytest.mark.django_db(transaction=True)


def test_lists_follow_the_next_links_across_pages(live: Live, hc: HarnessClient) -> None:
    made = [hc.create_session(ref=f"S-{n}").id for n in range(5)]
    recorder = Recorder()
    with live.client(transport=recorder) as paged:
        listed = paged.list_sessions(page_size=2)
        assert recorder.exchanges == []  # lazy: nothing is fetched before the first item is asked for
        assert [s.id for s in listed] == made[::-1]  # newest first
    assert [r.url.params.get("limit") for r, _ in recorder.exchanges] == ["2", "2", "2"]
    assert "cursor" not in recorder.exchanges[0][0].url.params
    assert all("cursor" in r.url.params for r, _ in recorder.exchanges[1:])

    run = hc.create_run(session=made[0])
    for n in range(4):
        hc.append_event(run.id, "step", {"n": n})
    events = list(hc.list_events(run.id, kind="step", page_size=3))
    assert [e.data["n"] for e in events] == [0, 1, 2, 3]
    assert [e.kind for e in hc.list_events(run.id, after_seq=events[1].seq)] == ["step", "step"]
    assert list(hc.list_runs(status="succeeded")) == []


def test_items_in_order_after_a_seq_and_the_newest_n(live: Live, hc: HarnessClient) -> None:
    session = hc.create_session()
    for start in (1, 101, 201):  # 210 items in three appends
        count = 100 if start < 201 else 10
        hc.append_items(session.id, [{"role": "user", "content": n} for n in range(start, start + count)])

    assert [i.seq for i in hc.list_items(session.id, page_size=200)] == list(range(1, 211))
    assert [i.content for i in hc.list_items(session.id, after_seq=205, page_size=2)] == [206, 207, 208, 209, 210]
    assert list(hc.list_items(session.id, after_seq=210)) == []

    recorder = Recorder()
    with live.client(transport=recorder) as reader:
        assert [i.seq for i in reader.recent_items(session.id, 3)] == [208, 209, 210]
        assert len(recorder.exchanges) == 1  # one request for the newest N (items/latest/)
        assert [i.seq for i in reader.recent_items(session.id, 205)] == list(range(6, 211))
        assert len(recorder.exchanges) == 2  # up to 500 in one request
        assert len(reader.recent_items(session.id, 1000)) == 210
        assert len(recorder.exchanges) == 3  # fewer than 500 there: nothing older to read
        latest = reader.latest_items(session.id, 2)
        assert (latest.session, latest.last_seq, [i.seq for i in latest.items]) == (session.id, 210, [209, 210])

    empty = hc.create_session()
    assert hc.recent_items(empty.id, 10) == []
