"""A retention pass on a million items and 100,000 runs, and the append and resume paths beside it (issue 20).

    createdb -h 127.0.0.1 -U postgres harness_bench_retention
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/harness_bench_retention SECRET_KEY=x ALLOWED_HOSTS=127.0.0.1 \\
        .venv/bin/python -m bench.retention_pass [--sessions 1000] [--items 1000] [--runs 100000] [--seconds 15]

Builds (each time: a pass consumes it) a project `retention-<time>` with bench.bulk (one row of each kind made
by the services, copied in SQL): `--sessions` sessions of `--items` items each; `--runs` runs, one in ten
waiting on an approval (live: the keep rules hold everything of it), the rest succeeded, each with three events,
a checkpoint, a second one as its last, and for every other run a third, a branch nobody continues; an effect per
run, consumed. The policy keeps the newest 100 items of a session, the last event of a run, no checkpoint beyond
the keep rules and the newest 10,000 effects.

Then, each for `--seconds`: the append path (`session_items_append`, one item a call, 2 client processes) and the
resume path (an approval requested, decided and resumed through `worker.pipeline`, 1 client process) with no
pass running; then the same two, in turns, while one process runs passes (`runs_app.retention.retention_pass`,
the defaults: 5,000 rows a statement, 20 rounds a pass) until one removes nothing. It prints the dry run, the
pass's time and rows, and the four throughputs. Not part of bin/bench: the fixture takes minutes to build.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "harness.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

from bench import bulk  # noqa: E402
from bench.core import Measure, Settings, measure  # noqa: E402
from bench.scenarios_worker import reviewer  # noqa: E402
from harness.actors import Actor  # noqa: E402
from harness.models import Project  # noqa: E402
from runs_app.models import Checkpoint, ExternalEffect, Run, RunEvent, RunStatus  # noqa: E402
from runs_app.retention import retention_pass, retention_policy_set, retention_report  # noqa: E402
from runs_app.services import (  # noqa: E402
    approval_decide,
    approval_request_create,
    checkpoint_create,
    effect_deliver,
    effect_intend,
    run_create,
    run_event_append,
    run_transition,
)
from sessions_app.models import SessionItem  # noqa: E402
from sessions_app.services import session_create, session_items_append  # noqa: E402
from worker.pipeline import resume_run_by_id  # noqa: E402

AGENT = Actor.for_agent("bench-retention")


def build(sessions: int, items: int, runs: int) -> Project:
    """The fixture, in SQL copies of rows the services made."""
    started = time.perf_counter()
    slug = f"retention-{int(time.time())}"
    project = Project.objects.create(slug=slug, name=slug)
    session = session_create(project=project, role="writer", memory_policy="bounded")
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": {"text": "x"}}])
    item = SessionItem.objects.get(session=session)
    session_ids = [session.pk, *bulk.clone("sessions_app_session", session.pk, count=sessions - 1)]
    bulk.execute("UPDATE sessions_app_session SET last_seq = %s WHERE project_id = %s", [items, project.pk])
    # g = 2..sessions*items: the template is the first session's seq 1; one second apart, the newest last.
    bulk.clone("sessions_app_sessionitem", item.pk, source="generate_series(2, %(n)s) AS g",
               params={"n": sessions * items, "sessions": session_ids, "per": items},
               overrides={"session_id": "(%(sessions)s::bigint[])[1 + (g - 1) / %(per)s]",
                          "seq": "1 + (g - 1) %% %(per)s",
                          "created_at": "t.created_at - (%(n)s - g) * interval '1 second'"})

    template = run_create(project=project, session_id=session.pk)
    run_transition(project=project, run_id=template.pk, to=RunStatus.RUNNING, expected_version=None)
    for n in range(3):
        run_event_append(project=project, run_id=template.pk, kind="step", data={"n": n})
    base = checkpoint_create(project=project, run_id=template.pk, label="base")
    last = checkpoint_create(project=project, run_id=template.pk, parent_id=base.pk, label="last")
    effect_intend(project=project, idempotency_key="bench-0", tool="t", arguments={}, run_id=template.pk)
    effect_deliver(project=project, idempotency_key="bench-0", result={"ok": True})
    run_transition(project=project, run_id=template.pk, to=RunStatus.SUCCEEDED, expected_version=None)
    effect = ExternalEffect.objects.get(project=project, idempotency_key="bench-0")

    run_ids = bulk.clone("runs_app_run", template.pk, count=runs - 1, overrides={
        "status": "CASE WHEN g %% 10 = 0 THEN 'waiting_approval' ELSE 'succeeded' END",
        "last_checkpoint_id": "NULL", "ref": "'RB-' || g"})
    event = RunEvent.objects.filter(run_id=template.pk, kind="step").order_by("seq").first()
    assert event is not None
    bulk.clone("runs_app_runevent", event.pk, source="unnest(%(runs)s::bigint[]) AS r(id), generate_series(1, 3) AS g",
               params={"runs": run_ids}, overrides={"run_id": "r.id", "seq": "g"})
    bulk.clone("runs_app_checkpoint", base.pk, over=run_ids, overrides={"run_id": "s.g"})
    bases = ("(SELECT id, run_id FROM runs_app_checkpoint WHERE project_id = %(project)s AND label = 'base' "
             "AND run_id <> %(template_run)s{only}) AS s")
    keys = {"project": project.pk, "template_run": template.pk}
    bulk.clone("runs_app_checkpoint", last.pk, source=bases.format(only=""), params=keys,
               overrides={"run_id": "s.run_id", "parent_id": "s.id"})
    bulk.clone("runs_app_checkpoint", last.pk, source=bases.format(only=" AND run_id %% 2 = 0"), params=keys,
               overrides={"run_id": "s.run_id", "parent_id": "s.id", "label": "'branch'"})
    bulk.execute("UPDATE runs_app_run r SET last_checkpoint_id = c.id FROM runs_app_checkpoint c "
                 "WHERE c.run_id = r.id AND c.label = 'last' AND r.project_id = %s", [project.pk])
    bulk.clone("runs_app_externaleffect", effect.pk, over=run_ids,
               overrides={"run_id": "s.g", "idempotency_key": "'bench-' || s.g"})
    bulk.analyze("sessions_app_session", "sessions_app_sessionitem", "runs_app_run", "runs_app_runevent",
                 "runs_app_checkpoint", "runs_app_externaleffect")
    print(f"built {SessionItem.objects.filter(session__project=project).count():,} items, "
          f"{Run.objects.filter(project=project).count():,} runs, "
          f"{RunEvent.objects.filter(run__project=project).count():,} events, "
          f"{Checkpoint.objects.filter(project=project).count():,} checkpoints, "
          f"{ExternalEffect.objects.filter(project=project).count():,} effects "
          f"in {time.perf_counter() - started:.0f} s", flush=True)
    return project


def appender(project_id: int) -> Any:
    """Each client appends to a session of its own (made in setup), one item a call."""
    def setup(index: int) -> dict[str, Any]:
        project = Project.objects.get(pk=project_id)
        session = session_create(project=project, role="writer", memory_policy="bounded")
        return {"project": project, "session": session.pk}

    def op(state: dict[str, Any]) -> None:
        session_items_append(project=state["project"], session_id=state["session"],
                             items=[{"role": "user", "content": {"text": "a turn"}}])

    return setup, op


def resumer(project_id: int) -> Any:
    """One approval's whole path: a run asks, a reviewer approves, the pipeline resumes it (agent executor)."""
    def setup(index: int) -> dict[str, Any]:
        import worker.tasks

        worker.tasks.enqueue_resume = lambda run_id: None  # resumed right here, not through the broker
        project = Project.objects.get(pk=project_id)
        session = session_create(project=project, role="writer", memory_policy="bounded")
        return {"project": project, "session": session.pk, "reviewer": Actor.for_user(reviewer(project)), "n": 0}

    def op(state: dict[str, Any]) -> None:
        project = state["project"]
        state["n"] += 1
        run = run_create(project=project, session_id=state["session"])
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        approval = approval_request_create(project=project, run_id=run.pk, tool="send", arguments={"n": state["n"]},
                                           idempotency_key=f"bench-resume-{os.getpid()}-{state['n']}", actor=AGENT,
                                           executor="agent")
        approval_decide(project=project, approval_id=approval.pk, actor=state["reviewer"], decision="approve")
        assert resume_run_by_id(run.pk, owner=f"worker:bench:{os.getpid()}") == "done"

    return setup, op


def _passes(project_id: int, out: Any) -> None:
    connections.close_all()
    project = Project.objects.get(pk=project_id)
    started, passes = time.perf_counter(), 0
    removed: dict[str, int] = {}
    while True:
        done = retention_pass(project=project)
        passes += 1
        for kind, count in done.items():
            removed[kind] = removed.get(kind, 0) + count
        if not any(done.values()):
            break
    out.put((time.perf_counter() - started, removed, passes))
    connections.close_all()
    out.close()
    out.join_thread()  # flush the result before the hard exit below
    os._exit(0)


def paths(project: Project, settings: Settings) -> tuple[Measure, Measure]:
    append_setup, append_op = appender(project.pk)
    resume_setup, resume_op = resumer(project.pk)
    return (measure("R", "append", setup=append_setup, op=append_op, clients=2, settings=settings),
            measure("R", "resume", setup=resume_setup, op=resume_op, clients=1, settings=settings))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    project = build(args.sessions, args.items, args.runs)
    retention_policy_set(project=project, actor=AGENT, settings={
        "items_keep_last": 100, "events_keep_last": 1, "checkpoints_keep_last": 0, "effects_keep_last": 10_000})
    started = time.perf_counter()
    report = retention_report(project=project)
    print(f"dry run in {time.perf_counter() - started:.1f} s:", flush=True)
    for kind, part in report.items():
        print(f"  {kind}: would remove {part.would_go:,}; kept {part.kept}", flush=True)
    settings = Settings(duration=args.seconds, warmup=2.0)
    quiet = paths(project, settings)

    connections.close_all()
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    runner = ctx.Process(target=_passes, args=(project.pk, out))
    runner.start()
    beside: list[tuple[Measure, Measure]] = []
    while runner.is_alive() and out.empty():
        pair = paths(project, settings)
        if runner.is_alive() and out.empty():  # only windows the pass outlasted
            beside.append(pair)
    seconds, removed, passes = out.get()
    runner.join(30)
    total = sum(removed.values())
    print(f"passes: {passes} in {seconds:.1f} s, {total:,} rows ({total / seconds:,.0f} rows/s): {removed}")
    print("| path | quiet ops/s | p50 ms | p99 ms | beside the pass ops/s | p50 ms | p99 ms | windows |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i, name in enumerate(("append (2 clients)", "approval -> resume (1 client)")):
        q = quiet[i]
        if beside:
            ops = sum(pair[i].ops for pair in beside) / sum(pair[i].seconds for pair in beside)
            p50 = sorted(pair[i].p50_ms for pair in beside)[len(beside) // 2]
            p99 = max(pair[i].p99_ms for pair in beside)
            during = f"{ops:.0f} | {p50:.1f} | {p99:.1f} | {len(beside)}"
        else:
            during = "- | - | - | 0 (the pass ended before a window did)"
        print(f"| {name} | {q.ops_per_s:.0f} | {q.p50_ms:.1f} | {q.p99_ms:.1f} | {during} |")


if __name__ == "__main__":
    main()
