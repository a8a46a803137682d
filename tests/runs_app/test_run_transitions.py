import pytest

from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.models import Run, RunEvent, RunStatus
from runs_app.services import run_claim, run_transition
from sessions_app.services import session_items_append
from tests import factories
from tests.threads import run_concurrently


@pytest.mark.django_db(transaction=True)
def test_sixteen_threads_one_version_exactly_one_wins():
    project = factories.make_project("race")
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=run.version)
    start_version = Run.objects.get(pk=run.pk).version

    results = run_concurrently(
        16,
        lambda i: run_transition(
            project=project.pk, run_id=run.pk, to=RunStatus.SUCCEEDED if i % 2 else RunStatus.FAILED,
            expected_version=start_version,
        ),
    )

    winners = [r for r in results if isinstance(r, Run)]
    losers = [r for r in results if isinstance(r, ConflictError)]
    assert len(winners) == 1
    assert len(losers) == 15
    assert {e.code for e in losers} <= {"version_conflict", "illegal_transition"}
    assert all(e.current_version == start_version + 1 for e in losers)
    final = Run.objects.get(pk=run.pk)
    assert final.version == start_version + 1
    assert final.status == winners[0].status
    # exactly one status event for the winning transition
    assert RunEvent.objects.filter(run=run, kind__in=["status.succeeded", "status.failed"]).count() == 1


@pytest.mark.django_db
def test_two_runs_in_one_session_are_independent_and_items_stay_ordered(project):
    session = factories.make_session(project)
    paused = factories.make_run(project, session)
    finished = factories.make_run(project, session)
    run_transition(project=project, run_id=paused.pk, to="running", expected_version=1)
    run_transition(project=project, run_id=finished.pk, to="running", expected_version=1)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": "a", "run_id": paused.pk}])
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "assistant", "content": "b", "run_id": finished.pk}])
    run_transition(project=project, run_id=paused.pk, to="waiting_external",
                   expected_version=Run.objects.get(pk=paused.pk).version)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "tool", "content": "c", "run_id": finished.pk}])
    run_transition(project=project, run_id=finished.pk, to="succeeded",
                   expected_version=Run.objects.get(pk=finished.pk).version)

    assert Run.objects.get(pk=paused.pk).status == "waiting_external"
    assert Run.objects.get(pk=finished.pk).status == "succeeded"
    items = list(session.items.order_by("seq").values_list("seq", "content", "run_id"))
    assert items == [(1, "a", paused.pk), (2, "b", finished.pk), (3, "c", finished.pk)]
    # the paused run can still go on after its sibling finished
    run_transition(project=project, run_id=paused.pk, to="running",
                   expected_version=Run.objects.get(pk=paused.pk).version)
    assert Run.objects.get(pk=paused.pk).status == "running"


@pytest.mark.django_db
def test_waiting_for_approval_continues_only_through_the_worker(project):
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=1)
    version = run_transition(project=project, run_id=run.pk, to="waiting_approval", expected_version=None).version
    with pytest.raises(ConflictError) as caught:
        run_transition(project=project, run_id=run.pk, to="running", expected_version=version)
    assert caught.value.code == "worker_only_transition"
    assert run_transition(project=project, run_id=run.pk, to="running", expected_version=version,
                          actor=Actor.for_worker("worker:test")).status == "running"


@pytest.mark.django_db
def test_a_transition_under_a_lease_needs_the_lease(project):
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner="worker-a", lease_seconds=30)
    version = Run.objects.get(pk=run.pk).version
    for owner in ("worker-b", None):  # another owner, or none: the lease is lost to this caller (one code)
        with pytest.raises(ConflictError) as caught:
            run_transition(project=project, run_id=run.pk, to="running", expected_version=version, lease_owner=owner)
        assert (caught.value.code, caught.value.current_version) == ("lease_lost", version)
    assert run_transition(project=project, run_id=run.pk, to="running", expected_version=version,
                          lease_owner="worker-a").status == "running"


@pytest.mark.django_db
def test_finishing_a_run_releases_its_lease(project):
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner="w", lease_seconds=30)
    run_transition(project=project, run_id=run.pk, to="cancelled", expected_version=None)
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.lease_expires_at) == ("cancelled", "", None)


@pytest.mark.django_db
def test_run_events_get_gap_free_seqs(project):
    from runs_app.services import run_event_append

    run = factories.make_run(project)  # run.created is seq 1
    for i in range(5):
        run_event_append(project=project, run_id=run.pk, kind="note", data={"i": i})
    assert list(run.events.order_by("seq").values_list("seq", flat=True)) == [1, 2, 3, 4, 5, 6]
