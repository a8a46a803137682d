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
import json
import multiprocessing as mp
import os
import time
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

from bench import bulk, procs  # noqa: E402
from bench.core import Measure, Settings, measure  # noqa: E402
from bench.scenarios_api import ITEM_1K, _Http  # noqa: E402
from bench.scenarios_http import agent_token  # noqa: E402
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


def operator(project: Project) -> Actor:
    """An operator of the project (only an operator sets a retention policy, never an agent token)."""
    from django.contrib.auth.models import Group, User

    from harness.models import Membership
    from harness.tenancy import Role

    user, _ = User.objects.get_or_create(username=f"bench-operator-{project.slug}")
    user.groups.add(Group.objects.get_or_create(name=Role.OPERATOR)[0])
    Membership.objects.get_or_create(user=user, project=project)
    return Actor.for_user(user)


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


def http_appender(project_id: int, port: int, token: str) -> Any:
    """What an agent does: a keyed append (fresh Idempotency-Key, ~1 KB item) over HTTP to the real server,
    each client to a session of its own, one keep-alive connection each (as scenario H1)."""
    body = json.dumps({"items": [ITEM_1K]}).encode()

    def setup(index: int) -> dict[str, Any]:
        project = Project.objects.get(pk=project_id)
        session = session_create(project=project, role="writer", memory_policy="bounded")
        return {"http": _Http(port, token), "path": f"/api/v1/sessions/{session.pk}/items/"}

    def op(state: dict[str, Any]) -> None:
        state["http"].post(state["path"], body)

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
        began = time.perf_counter()
        done = retention_pass(project=project)
        passes += 1
        print(f"  pass {passes}: {time.perf_counter() - began:.1f} s {done}", flush=True)
        for kind, count in done.items():
            removed[kind] = removed.get(kind, 0) + count
        if not any(done.values()):
            break
    out.put((time.perf_counter() - started, removed, passes))
    connections.close_all()
    out.close()
    out.join_thread()  # flush the result before the hard exit below
    os._exit(0)


PATHS = ("append, in-process (2 clients)", "keyed append over HTTP (2 clients)", "approval -> resume (1 client)")


def paths(project: Project, settings: Settings, port: int, token: str) -> tuple[Measure, ...]:
    """The three paths, one after the other (each in fresh client processes)."""
    subjects = (appender(project.pk), http_appender(project.pk, port, token), resumer(project.pk))
    return tuple(measure("R", name, setup=setup, op=op, clients=2 if "2 clients" in name else 1, settings=settings)
                 for name, (setup, op) in zip(PATHS, subjects, strict=True))


def _row(windows: list[tuple[Measure, ...]], i: int) -> str:
    """Ops/s over all windows; p50 the median window's, p99 the worst window's."""
    if not windows:
        return "- | - | - | 0"
    ops = sum(w[i].ops for w in windows) / sum(w[i].seconds for w in windows)
    p50 = sorted(w[i].p50_ms for w in windows)[len(windows) // 2]
    p99 = max(w[i].p99_ms for w in windows)
    return f"{ops:.0f} | {p50:.1f} | {p99:.1f} | {len(windows)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--build-only", action="store_true", help="build the fixture, print its project, stop")
    parser.add_argument("--project", help="a fixture built before (e.g. in a copy of a --build-only database)")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    if args.project:
        project = Project.objects.get(slug=args.project)
    else:
        project = build(args.sessions, args.items, args.runs)
        retention_policy_set(project=project, actor=operator(project), settings={
            "items_keep_last": 100, "events_keep_last": 1, "checkpoints_keep_last": 0, "effects_keep_last": 10_000})
    if args.build_only:
        print(f"project {project.slug}")
        return
    started = time.perf_counter()
    report = retention_report(project=project)
    print(f"dry run in {time.perf_counter() - started:.1f} s:", flush=True)
    for kind, part in report.items():
        print(f"  {kind}: would remove {part.would_go:,}; kept {part.kept}", flush=True)
    settings = Settings(duration=args.seconds, warmup=2.0)
    token = agent_token(project.slug)
    server = procs.start_granian(workers=2, name="bench-retention-api")
    try:
        quiet = [paths(project, settings, server.port, token)]
        print("  quiet:", ", ".join(f"{m.ops_per_s:.0f}/s p50 {m.p50_ms:.1f} p99 {m.p99_ms:.1f}" for m in quiet[0]),
              flush=True)
        connections.close_all()
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        runner = ctx.Process(target=_passes, args=(project.pk, out))
        runner.start()
        beside: list[tuple[Measure, ...]] = []
        while runner.is_alive() and out.empty():
            window = paths(project, settings, server.port, token)
            print("  window:", ", ".join(f"{m.ops_per_s:.0f}/s p50 {m.p50_ms:.1f} p99 {m.p99_ms:.1f}" for m in window),
                  flush=True)
            if runner.is_alive() and out.empty():  # only windows the pass outlasted
                beside.append(window)
        seconds, removed, passes = out.get()
        runner.join(30)
        quiet.append(paths(project, settings, server.port, token))  # after: the same paths, quiet again
    finally:
        server.stop()
    total = sum(removed.values())
    print(f"passes: {passes} in {seconds:.1f} s, {total:,} rows ({total / seconds:,.0f} rows/s): {removed}")
    print("| path | quiet ops/s | p50 ms | p99 ms | windows | beside the pass ops/s | p50 ms | p99 ms | windows |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i, name in enumerate(PATHS):
        print(f"| {name} | {_row(quiet, i)} | {_row(beside, i)} |")
    print("quiet windows (before, after):", [[f"{w[i].ops_per_s:.0f}" for i in range(len(PATHS))] for w in quiet])


if __name__ == "__main__":
    main()
