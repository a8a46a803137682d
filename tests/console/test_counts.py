"""The console's counts: each from the app that owns the rows, computed only when a template shows it."""

from collections.abc import Callable, Sequence

import pytest
from django.urls import reverse

from console import context_processors
from harness.actors import Actor
from memory_app.models import MemoryRecord, MemoryStatus
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every count computed, by name, in order (each count still answers its app's number)."""
    made: list[str] = []

    def recorded(name: str, count: Callable[[Sequence[int]], int]) -> Callable[[Sequence[int]], int]:
        def wrapper(project_ids: Sequence[int]) -> int:
            made.append(name)
            return count(project_ids)

        return wrapper

    for name, count in list(context_processors.COUNTS.items()):
        monkeypatch.setitem(context_processors.COUNTS, name, recorded(name, count))
    return made


def test_the_overview_shows_each_apps_count_once_per_request(scene: Scene, reviewer_client, calls) -> None:  # type: ignore[no-untyped-def]
    from runs_app.services import run_transition

    run_transition(project=scene.project, run_id=scene.run.pk, to="blocked", expected_version=None,
                   actor=Actor.for_worker("worker:test"),
                   blocked_step="capability", error={"reason": "no adapter"})
    MemoryRecord.objects.filter(pk=scene.memory.pk).update(status=MemoryStatus.HELD)
    body = reviewer_client.get(reverse("dashboard")).content.decode()
    assert '<strong id="blocked-count">1</strong> runs blocked' in body
    assert "<strong>1</strong> memory records held for review" in body
    # The pending approvals the user decides are shown twice (the badge and the tile), counted once; the tile
    # also shows every approval the inbox lists (approvals_waiting, issue 32).
    assert sorted(calls) == ["approvals_waiting", "blocked_runs", "held_memory", "pending_approvals"]


def test_a_page_counts_only_what_it_shows_and_a_fragment_nothing(scene: Scene, reviewer_client, calls) -> None:  # type: ignore[no-untyped-def]
    reviewer_client.get(reverse("runs:approval_inbox"))
    assert calls == ["pending_approvals", "pending_questions"]  # the navigation's badge, the questions tab's
    calls.clear()
    fragment = reviewer_client.get(reverse("runs:approval_inbox") + "?part=inbox-table", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and calls == ["pending_approvals"]  # the table's "for you to decide"
    calls.clear()
    assert reviewer_client.get(reverse("runs:run_inspector", args=[scene.run.pk]) + "?part=events",
                               HTTP_HX_REQUEST="true").status_code == 200 and calls == []


def test_the_badge_refreshes_itself_with_the_pending_count(scene: Scene, reviewer_client, calls) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("pending_count"), HTTP_HX_REQUEST="true").content.decode()
    assert body.startswith('<span id="pending-count"') and ">1</span>" in body
    # Also when a live page redrew (issue 32) and when the push says something changed (issue 35).
    assert 'hx-trigger="every 5s, desk-changed from:body, harness-push from:body"' in body
    assert calls == ["pending_approvals"]


def test_the_badge_reads_1000_plus_above_the_cap(scene: Scene, reviewer_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(context_processors.COUNTS, "pending_approvals", lambda project_ids: 1001)
    assert ">1000+</span>" in reviewer_client.get(reverse("pending_count")).content.decode()


def test_the_login_page_counts_nothing(client, calls) -> None:  # type: ignore[no-untyped-def]
    assert client.get(reverse("login")).status_code == 200 and calls == []
