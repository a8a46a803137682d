"""A LangGraph thread's life past its writes, against a live server: copy_thread as a fork the console's lineage
pages show, prune and delete_for_runs under the retention keep rules, a thread's TTL applied by the retention pass
on a controlled clock, the example, and another project's token refused."""

import datetime as dt
import os
import subprocess
import sys
import warnings
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from harness_client import HarnessClient
from harness_client.errors import ConflictError, NotFoundError
from harness_client.langgraph import HarnessSaver, KeptThreadsWarning
from langgraph.checkpoint.base import empty_checkpoint

from harness.models import AuditEntry
from runs_app.models import Checkpoint, CheckpointWrite, RetentionPolicy, Run
from runs_app.retention import KindReport, retention_pass, retention_report
from runs_app.services.checkpoints import checkpoint_create
from tests import factories
from tests.client.conftest import Live
from tests.subprocesses import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def _chain(saver: HarnessSaver, thread: str, n: int, *, ns: str = "", run_id: str | None = None) -> list[Any]:
    """n checkpoints on `thread`, each the previous one's child; a pending write on the newest."""
    configs: list[Any] = []
    parent: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    for step in range(n):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"step": step}
        checkpoint["channel_versions"] = {"step": step + 1}
        metadata: Any = {"source": "loop", "step": step, **({"run_id": run_id} if run_id else {})}
        parent = saver.put(parent, checkpoint, metadata, {"step": step + 1})
        configs.append(parent)
    saver.put_writes(configs[-1], [("notes", f"after {n}")], "task-1")
    return configs


def _ids(saver: HarnessSaver, thread: str, ns: str | None = "") -> list[str]:
    config: Any = {"configurable": {"thread_id": thread, **({"checkpoint_ns": ns} if ns is not None else {})}}
    return [t.config["configurable"]["checkpoint_id"] for t in saver.list(config)]


def _browser() -> Client:
    browser = Client()
    browser.force_login(User.objects.get(username="client-reviewer"))
    return browser


def _pending_approval(hc: HarnessClient, thread: str) -> int:
    run = hc.ensure_thread(thread).run
    return hc.request_approval(run, tool="publish", idempotency_key=f"publish-{thread}", arguments={"x": 1},
                               executor="agent").id


def test_copy_thread_is_a_fork_the_lineage_pages_show_and_its_rows_are_its_own(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    configs = _chain(saver, "source", 3)
    _chain(saver, "source", 1, ns="child:1")
    saver.copy_thread("source", "copy")

    assert _ids(saver, "copy") == _ids(saver, "source") == [c["configurable"]["checkpoint_id"] for c in configs[::-1]]
    assert _ids(saver, "copy", "child:1") == _ids(saver, "source", "child:1")
    newest = saver.get_tuple({"configurable": {"thread_id": "copy"}})
    assert newest is not None and newest.checkpoint["channel_values"] == {"step": 2}
    assert newest.pending_writes == [("task-1", "notes", "after 3")]
    source_run = Run.objects.get(project=live.project, ref="source")
    copy_run = Run.objects.get(project=live.project, ref="copy")
    assert copy_run.task_mode == "langgraph" and copy_run.session_id != source_run.session_id
    assert Checkpoint.objects.get(pk=copy_run.last_checkpoint_id).external_id == newest.checkpoint["id"]
    # Recorded as a fork: both runs' events, and the audit entry.
    assert copy_run.events.filter(kind="thread.copied", data__from_run=source_run.pk).exists()
    assert source_run.events.filter(kind="thread.copy_made", data__to_run=copy_run.pk).exists()
    assert AuditEntry.objects.filter(action="thread.copied", data__to_thread="copy").count() == 1

    # The console's lineage pages show the branch, both ways.
    browser = _browser()
    copy_page = browser.get(f"/runs/{copy_run.pk}/lineage/").content.decode()
    assert 'id="thread-copied-from"' in copy_page and f"/runs/{source_run.pk}/lineage/" in copy_page
    source_page = browser.get(f"/runs/{source_run.pk}/lineage/").content.decode()
    assert 'id="thread-copies"' in source_page and f"/runs/{copy_run.pk}/lineage/" in source_page

    # The copy's rows are its own: deleting the source leaves it whole.
    saver.delete_thread("source")
    assert _ids(saver, "source") == [] and len(_ids(saver, "copy")) == 3
    # Under one Idempotency-Key a copy is made once: the retry is answered as the first was.
    first = hc.copy_thread("copy", "copy-keyed", request_key="copy-once")
    assert hc.copy_thread("copy", "copy-keyed", request_key="copy-once") == first
    assert Run.objects.filter(project=live.project, ref="copy-keyed").count() == 1
    # A taken target, an unknown source.
    with pytest.raises(ConflictError) as taken:
        saver.copy_thread("copy", "source")  # the source's run stays after its deletion: the id is taken
    assert taken.value.code == "thread_exists"
    with pytest.raises(NotFoundError) as absent:
        saver.copy_thread("never-seen", "copy-3")
    assert absent.value.code == "thread_not_found"


def test_prune_keeps_the_newest_per_namespace_and_written_again_it_still_reads(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    configs = _chain(saver, "long", 4)
    pruned = hc.prune_threads(["long"], strategy="keep_latest")
    assert (pruned.checkpoints, pruned.kept) == (3, [])
    assert _ids(saver, "long") == [configs[-1]["configurable"]["checkpoint_id"]]
    kept = Checkpoint.objects.get(run__ref="long", project=live.project)
    assert kept.parent_id is None and kept.depth == 0 and kept.parent_external_id  # LangGraph's parent id stays
    assert Run.objects.get(project=live.project, ref="long").last_checkpoint_id == kept.pk
    # It goes on from there: the next checkpoint's parent is the kept one.
    checkpoint = empty_checkpoint()
    saver.put(configs[-1], checkpoint, {"source": "loop", "step": 4}, {})
    assert Checkpoint.objects.get(project=live.project, external_id=checkpoint["id"]).parent_id == kept.pk
    assert AuditEntry.objects.filter(action="thread.pruned", data__thread_id="long").count() == 1


def test_what_the_services_own_checkpoint_descends_from_stays(live: Live, hc: HarnessClient) -> None:
    """A checkpoint of the service's own (the resume worker's, a console fork's) under a thread checkpoint keeps
    that checkpoint and its ancestors (lineage_of_kept); the rest of the prune goes."""
    saver = HarnessSaver(client=hc)
    configs = _chain(saver, "resumed", 4)
    run = Run.objects.get(project=live.project, ref="resumed")
    second = Checkpoint.objects.get(run=run, external_id=configs[1]["configurable"]["checkpoint_id"])
    checkpoint_create(project=live.project, run_id=run.pk, parent_id=second.pk, label="resume", state={"x": 1})
    pruned = hc.prune_threads(["resumed"], strategy="keep_latest")
    assert pruned.kept == [{"thread_id": "resumed", "rule": "lineage_of_kept"}] and pruned.checkpoints == 1
    ids = [c["configurable"]["checkpoint_id"] for c in configs]
    assert _ids(saver, "resumed") == [ids[3], ids[1], ids[0]]  # the third went; the newest was written again
    newest = Checkpoint.objects.get(run=run, external_id=ids[3])
    assert newest.parent_id == second.pk and newest.depth == second.depth + 1
    assert Checkpoint.objects.filter(run=run, external_id="", parent=second).count() == 1


def test_a_pending_approval_keeps_its_thread_from_prune_deletion_and_delete_for_runs(
    live: Live, hc: HarnessClient,
) -> None:
    saver = HarnessSaver(client=hc)
    _chain(saver, "asked", 3, run_id="lg-1")
    _chain(saver, "free", 3, run_id="lg-1")
    _pending_approval(hc, "asked")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        saver.prune(["asked", "free"], strategy="keep_latest")
    assert [w.category for w in caught] == [KeptThreadsWarning]
    assert "asked (shown_by_pending_approval)" in str(caught[0].message)
    assert len(_ids(saver, "asked")) == 3 and len(_ids(saver, "free")) == 1
    answer = hc.delete_thread_runs(["lg-1"])
    assert answer.kept == [{"thread_id": "asked", "rule": "shown_by_pending_approval"}] and answer.checkpoints == 1
    assert len(_ids(saver, "asked")) == 3 and _ids(saver, "free") == []
    with pytest.raises(ConflictError) as refused:
        saver.delete_thread("asked")
    assert refused.value.code == "thread_kept" and refused.value.body["rule"] == "shown_by_pending_approval"
    assert len(_ids(saver, "asked")) == 3


def test_the_retention_pass_expires_a_thread_past_its_ttl_and_keeps_one_an_approval_needs(
    live: Live, hc: HarnessClient,
) -> None:
    saver = HarnessSaver(client=hc)
    for thread in ("short", "asked", "default", "forever"):
        _chain(saver, thread, 2)
    assert saver.set_ttl("short", 1).ttl_days == 1
    saver.set_ttl("asked", 1)
    _pending_approval(hc, "asked")
    ttl = hc.get_thread_ttl("short")
    assert ttl.project_ttl_days is None and ttl.expires_at is not None
    assert hc.get_thread_ttl("default").expires_at is None  # no TTL anywhere: kept

    # The dry run counts the threads past their TTL now: none yet.
    assert retention_report(project=live.project)["threads"] == KindReport(would_go=0, kept={})
    # A controlled clock: the pass as if it ran two days later. No policy yet: the threads' own TTLs apply.
    later = timezone.now() + dt.timedelta(days=2)
    assert retention_report(project=live.project, now=later)["threads"] == KindReport(
        would_go=1, kept={"shown_by_pending_approval": 1})
    assert retention_pass(project=live.project, now=later).get("threads_expired") == 1
    assert _ids(saver, "short") == [] and not CheckpointWrite.objects.filter(run__ref="short").exists()
    assert len(_ids(saver, "asked")) == 2  # shown_by_pending_approval: kept until it is decided
    assert len(_ids(saver, "default")) == 2
    run = Run.objects.get(project=live.project, ref="short")
    assert run.events.filter(kind="thread.expired").count() == 1
    assert AuditEntry.objects.filter(action="thread.expired", target_id=str(run.pk)).count() == 1

    # The project's default: every thread without its own TTL; one that set its own longer TTL stays.
    projects = _browser().get("/projects/").content.decode()
    assert "keeps everything" in projects and "LangGraph threads expire" not in projects
    RetentionPolicy.objects.create(project=live.project, thread_ttl_days=1)
    projects = _browser().get("/projects/").content.decode()
    assert "policy set; LangGraph threads expire 1 day after their last change" in projects
    saver.set_ttl("forever", 30)
    assert retention_pass(project=live.project, now=later).get("threads_expired") == 1
    assert _ids(saver, "default") == [] and len(_ids(saver, "forever")) == 2 and len(_ids(saver, "asked")) == 2
    # The run's lineage page shows the TTL that applies.
    forever = Run.objects.get(project=live.project, ref="forever").pk
    page = _browser().get(f"/runs/{forever}/lineage/").content.decode()
    assert 'id="thread-ttl"' in page and "30 days since its last change (the thread" in page
    inspector = _browser().get(f"/runs/{forever}/").content.decode()
    assert 'id="run-thread-ttl"' in inspector and "time to live 30 days (its own" in inspector
    asked = _browser().get(f"/runs/{Run.objects.get(project=live.project, ref='asked').pk}/").content.decode()
    assert "time to live 1 day (its own" in asked


def test_another_projects_token_reaches_none_of_it(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    _chain(saver, "mine", 3, run_id="lg-9")
    other = factories.make_project("otherco")
    _, token = factories.make_agent_token(other, name="other-agent")
    with live.client(token) as intruder:
        with pytest.raises(NotFoundError):
            intruder.copy_thread("mine", "stolen")
        with pytest.raises(NotFoundError):
            intruder.set_thread_ttl("mine", 1)
        with pytest.raises(NotFoundError):
            intruder.get_thread_ttl("mine")
        assert intruder.prune_threads(["mine"], strategy="delete").checkpoints == 0
        assert intruder.delete_thread_runs(["lg-9"]).checkpoints == 0
    assert len(_ids(saver, "mine")) == 3 and not Run.objects.filter(ref="stolen").exists()
    assert Run.objects.get(project=live.project, ref="mine").thread_ttl_days is None


def test_the_retention_example_runs_against_the_live_server(live: Live) -> None:
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": live.agent_token}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "langgraph_retention.py"), "--thread", "ex"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    source = list(Checkpoint.objects.filter(project=live.project, run__ref="ex"))
    copy = Checkpoint.objects.filter(project=live.project, run__ref="ex-alt")
    assert len(source) == 1 and copy.count() > 3  # pruned to its newest; the branch kept all and went on
    assert "pruned ex: " in done.stdout and "kept: []" in done.stdout
    assert "Revised. (alt) Revised." in done.stdout
    assert Run.objects.get(project=live.project, ref="ex-alt").thread_ttl_days == 30
