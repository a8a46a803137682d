"""Scenarios 1-4 and 6: the storage hot paths, against the peers on the same PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import psycopg
from django.db import connection, connections
from psycopg.rows import DictRow, TupleRow, dict_row
from psycopg.types.json import Jsonb

from bench.core import Measure, Settings, Subject, measure_turns
from harness.models import Project
from runs_app.models import Checkpoint, Run
from runs_app.selectors.checkpoints import checkpoint_latest, checkpoint_lineage
from runs_app.services import checkpoint_create, run_claim, run_create, run_release
from sessions_app.models import Session, SessionItem
from sessions_app.selectors import session_items_latest
from sessions_app.services import NewItem, session_create, session_items_append

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import Checkpoint as LgCheckpoint

ITEM: NewItem = {"role": "user", "content": {"text": "Draft the storm scene; keep the keeper unnamed.", "tokens": 12}}
SDK_ITEM: Any = {"role": "user", "content": "Draft the storm scene; keep the keeper unnamed."}  # an SDK input item
STATE = {"completed": ["outline", "draft"], "artifacts": {"draft": "sha256:" + "ab" * 32}, "notes": "x" * 200}


def _scalar(cursor: psycopg.Cursor[TupleRow]) -> Any:
    """The first column of a query that always answers one row (an aggregate, a `to_regclass` test)."""
    row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the query answered no row")
    return row[0]


def pg_url() -> str:
    s = connection.settings_dict
    host, port = s.get("HOST") or "127.0.0.1", s.get("PORT") or 5432
    return f"postgresql://{s.get('USER') or 'postgres'}@{host}:{port}/{s['NAME']}"


def _project() -> Project:
    return Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})[0]


def _new_session(project: Project) -> int:
    return session_create(project=project, role="manager", memory_policy="bounded").pk


def _new_run(project: Project) -> int:
    return run_create(project=project, session_id=_new_session(project)).pk


def _gap_free(session_ids: list[int]) -> bool:
    for sid in session_ids:
        seqs = list(SessionItem.objects.filter(session_id=sid).order_by("seq").values_list("seq", flat=True))
        if seqs != list(range(1, len(seqs) + 1)):
            return False
    return True


# --- 1. append one item per transaction ------------------------------------------------------

def scenario_append(settings: Settings) -> list[Measure]:
    out: list[Measure] = []
    project = _project()
    for clients in settings.clients:
        sessions = [_new_session(project) for _ in range(clients)]
        raw_sessions = [_new_session(project) for _ in range(clients)]

        def ours(i: int, sessions: list[int] = sessions) -> dict:
            return {"project": project, "sid": sessions[i]}

        def raw_setup(i: int, raw_sessions: list[int] = raw_sessions) -> dict:
            # One statement in autocommit: one round trip, as ours (not BEGIN, INSERT, COMMIT).
            conn = psycopg.connect(pg_url(), autocommit=True)
            sid = raw_sessions[i]
            seq = _scalar(conn.execute(
                "SELECT coalesce(max(seq), 0) FROM sessions_app_sessionitem WHERE session_id = %s", (sid,)))
            return {"conn": conn, "sid": sid, "seq": seq}

        def raw_op(s: dict) -> None:
            s["seq"] += 1
            s["conn"].execute(
                "INSERT INTO sessions_app_sessionitem (session_id, seq, role, content, created_at) "
                "VALUES (%s, %s, %s, %s, now())",
                (s["sid"], s["seq"], "user", Jsonb(ITEM["content"])))

        sdk, sdk_check = sdk_append_subject()
        m, raw, sdk_m = measure_turns("1 append item", [
            Subject("harness service", ours,
                    lambda s: session_items_append(project=s["project"], session_id=s["sid"], items=[ITEM])),
            Subject("raw psycopg INSERT (autocommit)", raw_setup, raw_op),
            sdk,
        ], clients=clients, settings=settings)
        stored = SessionItem.objects.filter(session_id__in=sessions).count()
        m.extra["check"] = stored == m.extra["acknowledged"] and _gap_free(sessions)
        raw.extra["check"] = (SessionItem.objects.filter(session_id__in=raw_sessions).count()
                              == raw.extra["acknowledged"])
        sdk_m.extra["check"] = sdk_check(sdk_m)
        out += [m, raw, sdk_m]
    return out


def sdk_append_subject() -> tuple[Subject, Callable[[Measure], bool]]:
    """The Agents SDK's SQLAlchemySession.add_items, one item per call, each client its own session;
    and the check that the SDK stored what it acknowledged."""
    tag = uuid.uuid4().hex[:8]

    def sdk_setup(i: int) -> dict:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        loop = asyncio.new_event_loop()
        session = SQLAlchemySession.from_url(f"bench-{tag}-{i}", url=_sdk_url(), create_tables=True)
        return {"loop": loop, "session": session}

    async def sdk_op(s: dict) -> None:
        await s["session"].add_items([SDK_ITEM])

    def check(m: Measure) -> bool:
        return _sdk_count(f"bench-{tag}-%") == m.extra["acknowledged"]

    return Subject("Agents SDK SQLAlchemySession.add_items", sdk_setup, sdk_op), check


def _sdk_url() -> str:
    return pg_url().replace("postgresql://", "postgresql+asyncpg://")


def _sdk_count(pattern: str) -> int:
    with psycopg.connect(pg_url()) as conn:
        if not _scalar(conn.execute("SELECT to_regclass('agent_messages') IS NOT NULL")):
            return 0
        return _scalar(conn.execute("SELECT count(*) FROM agent_messages WHERE session_id LIKE %s", (pattern,)))


# --- 2. read the last 50 items of a 10,000-item session ----------------------------------------

def latest_items(session_id: int, project_id: int, limit: int = 50) -> list[dict]:
    return session_items_latest(project=project_id, session_id=session_id, limit=limit)


READ_REF = "bench-read-10k"


def _read_fixture(project: Project) -> tuple[int, str]:
    """A 10,000-item session of ours and of the SDK's (made once, reused by later runs)."""
    session = Session.objects.filter(project=project, ref=READ_REF).first()
    if session is None or SessionItem.objects.filter(session=session).count() != 10_000:
        if session is not None:
            Session.objects.filter(pk=session.pk).update(ref=f"{READ_REF}-stale-{uuid.uuid4().hex[:6]}")
        session = session_create(project=project, role="manager", memory_policy="bounded", ref=READ_REF)
        for _ in range(20):
            session_items_append(project=project, session_id=session.pk, items=[ITEM] * 500)
    if _sdk_count(READ_REF) != 10_000:
        with psycopg.connect(pg_url()) as conn:
            if _scalar(conn.execute("SELECT to_regclass('agent_messages') IS NOT NULL")):
                conn.execute("DELETE FROM agent_messages WHERE session_id = %s", (READ_REF,))
                conn.execute("DELETE FROM agent_sessions WHERE session_id = %s", (READ_REF,))

        async def fill() -> None:
            from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

            sdk = SQLAlchemySession.from_url(READ_REF, url=_sdk_url(), create_tables=True)
            for _ in range(20):
                await sdk.add_items([SDK_ITEM] * 500)
            await sdk.engine.dispose()

        asyncio.run(fill())
    return session.pk, READ_REF


def scenario_read_latest_items(settings: Settings) -> list[Measure]:
    project = _project()
    sid, tag = _read_fixture(project)
    with psycopg.connect(pg_url(), autocommit=True) as conn:  # both sides' tables, after they are filled
        conn.execute("ANALYZE sessions_app_sessionitem, agent_messages, agent_sessions")
    out = []

    def sdk_setup(i: int) -> dict:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        return {"loop": asyncio.new_event_loop(), "session": SQLAlchemySession.from_url(tag, url=_sdk_url())}

    async def sdk_op(s: dict) -> None:
        items = await s["session"].get_items(limit=50)
        assert len(items) == 50

    for clients in settings.clients:
        m, sdk = measure_turns("2 read last 50 of 10k", [
            Subject("harness selector", lambda i: sid, lambda s: latest_items(s, project.pk)),
            Subject("Agents SDK get_items(limit=50)", sdk_setup, sdk_op),
        ], clients=clients, settings=settings)
        m.extra["check"] = [i["seq"] for i in latest_items(sid, project.pk)] == list(range(9951, 10001))
        out += [m, sdk]
    return out


# --- 3. write a checkpoint and read the latest ---------------------------------------------------

def latest_checkpoint(run_id: int, project_id: int) -> Checkpoint | None:
    return checkpoint_latest(project=project_id, run_id=run_id)


def scenario_checkpoint(settings: Settings) -> list[Measure]:
    project = _project()
    _lg_tables()
    out = []
    for clients in settings.clients:
        runs = [_new_run(project) for _ in range(clients)]
        threads = [f"bench-{uuid.uuid4().hex[:8]}-{i}" for i in range(clients)]

        def ours_setup(i: int, runs: list[int] = runs) -> dict:
            # Every round continues its run's chain from the checkpoint the last round left.
            last = Run.objects.values_list("last_checkpoint_id", flat=True).get(pk=runs[i])
            return {"pid": project.pk, "rid": runs[i], "last": last,
                    "n": Checkpoint.objects.filter(run_id=runs[i]).count()}

        def ours_write(s: dict) -> None:
            cp = checkpoint_create(project=s["pid"], run_id=s["rid"], parent_id=s["last"], state=STATE,
                                   cursor={"node": "draft", "step": s["n"]})
            s["last"], s["n"] = cp.pk, s["n"] + 1

        def lg_setup(i: int, threads: list[str] = threads) -> dict:
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = PostgresSaver(lg_connection())
            config: RunnableConfig = {"configurable": {"thread_id": threads[i], "checkpoint_ns": ""}}
            latest = saver.get_tuple(config)  # continue the thread the last round left
            return {"saver": saver, "config": latest.config if latest else config,
                    "n": latest.metadata.get("step", 0) if latest else 0}

        def lg_write(s: dict) -> None:
            s["n"] += 1
            s["config"] = s["saver"].put(s["config"], lg_checkpoint(s["n"]), {"source": "loop", "step": s["n"]},
                                         {"state": s["n"]})

        def lg_read(s: dict) -> None:
            assert s["saver"].get_tuple({"configurable": {"thread_id": s["config"]["configurable"]["thread_id"],
                                                          "checkpoint_ns": ""}}) is not None

        write, lg_put = measure_turns("3 checkpoint write", [
            Subject("harness checkpoint_create", ours_setup, ours_write),
            Subject("LangGraph PostgresSaver.put", lg_setup, lg_write),
        ], clients=clients, settings=settings)
        write.extra["check"] = all(chain_intact(rid) for rid in runs) and \
            Checkpoint.objects.filter(run_id__in=runs).count() == write.extra["acknowledged"]

        def ours_read_setup(i: int, runs: list[int] = runs) -> int:
            return runs[i]

        read, lg_get = measure_turns("3 checkpoint read latest", [
            Subject("harness latest checkpoint", ours_read_setup, lambda rid: latest_checkpoint(rid, project.pk)),
            Subject("LangGraph PostgresSaver.get_tuple", lg_setup, lg_read),
        ], clients=clients, settings=settings)
        out += [write, read, lg_put, lg_get]
    return out


def lg_connection(*, jit: bool = True) -> psycopg.Connection[DictRow]:
    """A connection as LangGraph's documentation sets one up for `PostgresSaver`; with jit=False, `jit = off`."""
    return psycopg.connect(pg_url(), autocommit=True, prepare_threshold=0, row_factory=dict_row,
                           options="" if jit else "-c jit=off")


def _lg_tables() -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    with lg_connection() as conn:
        PostgresSaver(conn).setup()


def lg_checkpoint(n: int, state: dict[str, Any] = STATE) -> LgCheckpoint:
    """The n-th LangGraph checkpoint of a chain, one channel holding `state`."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6

    cp = empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=n))
    cp["channel_values"] = {"state": state}
    cp["channel_versions"] = {"state": n}
    return cp


def chain_intact(run_id: int) -> bool:
    rows = list(Checkpoint.objects.filter(run_id=run_id).order_by("id").values_list("id", "parent_id", "depth"))
    return all(parent == (rows[k - 1][0] if k else None) and depth == k for k, (_, parent, depth) in enumerate(rows))


# --- 4. read a 1,000-deep lineage -------------------------------------------------------------------

def lineage(checkpoint_id: int, project_ids: list[int]) -> list[dict]:
    return checkpoint_lineage(project_ids=project_ids, checkpoint_id=checkpoint_id)


def scenario_lineage(settings: Settings) -> list[Measure]:
    project = _project()
    _lg_tables()
    rid = _new_run(project)
    last: int = checkpoint_create(project=project.pk, run_id=rid, parent_id=None, state=STATE, cursor={"n": 0}).pk
    for n in range(1, 1000):
        last = checkpoint_create(project=project.pk, run_id=rid, parent_id=last, state=STATE, cursor={"n": n}).pk
    thread = f"bench-lineage-{uuid.uuid4().hex[:8]}"
    from langgraph.checkpoint.postgres import PostgresSaver

    with lg_connection() as conn:
        saver = PostgresSaver(conn)
        config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        for n in range(1, 1001):
            config = saver.put(config, lg_checkpoint(n), {"step": n}, {"state": n})
        # What autovacuum would have done after these inserts on a stock PostgreSQL (this machine's runs
        # with it off): without fresh statistics the planner takes a 1,000-row thread for a few rows and
        # plans LangGraph's query below the JIT threshold in one run and above it in the next.
        conn.execute("ANALYZE runs_app_checkpoint, checkpoints, checkpoint_blobs, checkpoint_writes")
    out = []
    projects = [project.pk]

    def lg_setup(i: int) -> dict:
        from langgraph.checkpoint.postgres import PostgresSaver

        return {"saver": PostgresSaver(lg_connection())}

    def lg_setup_jit_off(i: int) -> dict:
        from langgraph.checkpoint.postgres import PostgresSaver

        return {"saver": PostgresSaver(lg_connection(jit=False))}

    def lg_list(s: dict) -> None:
        count = sum(1 for _ in s["saver"].list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}))
        assert count == 1000, count

    for clients in settings.clients:
        m, lg, lg_off = measure_turns("4 read 1,000-deep lineage", [
            Subject("harness lineage (recursive CTE)", lambda i: last, lambda cid: lineage(cid, projects)),
            Subject("LangGraph PostgresSaver.list", lg_setup, lg_list),
            Subject("LangGraph PostgresSaver.list (jit=off)", lg_setup_jit_off, lg_list),
        ], clients=clients, settings=settings)
        chain = lineage(last, projects)
        m.extra["check"] = len(chain) == 1000 and all(
            a["parent"] == b["id"] for a, b in zip(chain, chain[1:], strict=False))
        out += [m, lg, lg_off]
    return out


# --- 6. claim a run with a lease ----------------------------------------------------------------------

def scenario_claim(settings: Settings) -> list[Measure]:
    project = _project()
    out = []
    for clients in settings.clients:
        runs = [_new_run(project) for _ in range(clients)]
        # Two owners alternate on each client's own run: claim, release, the other owner claims. Every
        # op releases what it claimed, so a round starts from free runs whoever ran before.

        def raw_setup(i: int, runs: list[int] = runs) -> dict:
            return {"conn": psycopg.connect(pg_url()), "rid": runs[i], "n": 0}

        def ours_setup(i: int, runs: list[int] = runs) -> dict:
            return {"pid": project.pk, "rid": runs[i], "n": 0}

        out += measure_turns("6 claim run", [
            Subject("harness run_claim", ours_setup, _ours_claim),
            Subject("raw conditional UPDATE", raw_setup, _raw_claim),
        ], clients=clients, settings=settings)
    out.append(_contention_rounds(project, rounds=50))
    return out


def _ours_claim(s: dict) -> None:
    s["n"] += 1
    run_claim(project=s["pid"], run_id=s["rid"], owner=f"w{s['n'] % 2}", lease_seconds=30)
    # release, so the next claim (by the other owner) finds the run free
    run_release(project=s["pid"], run_id=s["rid"], owner=f"w{s['n'] % 2}")


RAW_CLAIM = """
UPDATE runs_app_run SET lease_owner = %(owner)s, lease_expires_at = now() + interval '30 seconds',
       version = version + 1, updated_at = now()
 WHERE id = %(rid)s AND (lease_owner = '' OR lease_expires_at <= now() OR lease_owner = %(owner)s)
   AND status NOT IN ('succeeded', 'failed', 'cancelled')
"""
RAW_RELEASE = """
UPDATE runs_app_run SET lease_owner = '', lease_expires_at = NULL, version = version + 1, updated_at = now()
 WHERE id = %(rid)s AND lease_owner = %(owner)s
"""


def _raw_claim(s: dict) -> None:
    s["n"] += 1
    params = {"owner": f"w{s['n'] % 2}", "rid": s["rid"]}
    assert s["conn"].execute(RAW_CLAIM, params).rowcount == 1
    s["conn"].commit()
    s["conn"].execute(RAW_RELEASE, params)
    s["conn"].commit()


def _contention_rounds(project: Project, rounds: int) -> Measure:
    """8 claimers, one run, `rounds` times: exactly one winner per round."""
    from harness.http.errors import ConflictError

    bad_rounds = 0
    for _ in range(rounds):
        rid = _new_run(project)
        barrier = threading.Barrier(8)
        wins: list[int] = []

        def claim(i: int, barrier: threading.Barrier = barrier, rid: int = rid, wins: list[int] = wins) -> None:
            barrier.wait()
            try:
                run_claim(project=project.pk, run_id=rid, owner=f"claimer-{i}", lease_seconds=30)
                wins.append(i)
            except ConflictError:
                pass
            finally:
                connections.close_all()

        threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        bad_rounds += len(wins) != 1
    return Measure("6 claim contention", "8 claimers x 1 run", 8, rounds, 0, 0, 0, 0,
                   extra={"check": bad_rounds == 0, "rounds": rounds, "rounds_without_exactly_one_winner": bad_rounds})


SCENARIOS: dict[str, Any] = {
    "1": scenario_append,
    "2": scenario_read_latest_items,
    "3": scenario_checkpoint,
    "4": scenario_lineage,
    "6": scenario_claim,
}
