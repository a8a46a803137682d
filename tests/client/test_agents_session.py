"""harness_client.agents.HarnessSession, the OpenAI Agents SDK session, against a live server.

- Differential: generated sequences of add_items / get_items(limit) / pop_item / clear_session give the same
  answers, call by call, as the SDK's own SQLAlchemySession on PostgreSQL (asyncpg, a database of its own).
- A lost reply to an append is retried and replayed: no item twice.
- Another project's token cannot read, pop or clear the session (404); its own session of the same name is
  another one.
"""

import os
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from agents.extensions.memory import SQLAlchemySession
from agents.memory import Session as SdkSession
from agents.memory import SessionSettings
from harness_client import AsyncHarnessClient, NotFoundError
from harness_client.agents import HarnessSession, item_role
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql
from sqlalchemy.ext.asyncio import create_async_engine

from sessions_app.models import Session, SessionItem
from tests import factories
from tests.client.conftest import FAST_RETRY, AsyncRecorder, Live, posts_to, run_async
from tests.parallel import worker_suffix

# --- the SDK's own store, on a PostgreSQL database of its own ---------------------------------------------


@pytest.fixture(scope="session")
def sdk_database_url() -> str:
    """`<the suite's database>_sdk` on the suite's server (created once, kept; one per xdist worker): never the
    test database."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    name = parts.path.lstrip("/") + "_sdk" + worker_suffix()
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlunsplit(parts._replace(scheme="postgresql+asyncpg", path="/" + name))
    run_async(_create_sdk_tables(url))
    return url


async def _create_sdk_tables(url: str) -> None:
    engine = create_async_engine(url)
    try:
        await SQLAlchemySession("setup", engine=engine, create_tables=True).get_items()
    finally:
        await engine.dispose()


# --- generated conversations ----------------------------------------------------------------------------

# Text PostgreSQL stores in jsonb and text alike: no NUL, no lone surrogate.
_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "developer"]), "content": _text | _json},
    optional={"type": st.just("message"), "id": _text},
)
_call = st.fixed_dictionaries({
    "type": st.just("function_call"), "call_id": _text, "name": _text, "arguments": _text,
})
_output = st.fixed_dictionaries({"type": st.just("function_call_output"), "call_id": _text, "output": _text})
_other = st.dictionaries(_text, _json, max_size=4)  # whatever else an item may be: kept as given
_item = st.one_of(_message, _call, _output, _other)

_operation = st.one_of(
    st.tuples(st.just("add"), st.lists(_item, max_size=4)),
    st.tuples(st.just("get"), st.none() | st.integers(0, 7)),
    st.tuples(st.just("pop")),
    st.tuples(st.just("clear")),
)


async def _apply(session: SdkSession, operation: tuple[Any, ...]) -> Any:
    match operation:
        case ("add", items):
            return await session.add_items(items)
        case ("get", limit):
            return await session.get_items(limit)
        case ("pop",):
            return await session.pop_item()
        case ("clear",):
            return await session.clear_session()
    raise AssertionError(operation)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_harness_session_answers_as_the_sdks_sqlalchemy_session(live: Live, sdk_database_url: str) -> None:
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(_operation, min_size=1, max_size=12))
    def same_answers(operations: list[tuple[Any, ...]]) -> None:
        run_async(_compare(live, sdk_database_url, operations))

    same_answers()


async def _compare(live: Live, sdk_database_url: str, operations: list[tuple[Any, ...]]) -> None:
    name = f"diff-{uuid.uuid4().hex[:12]}"
    engine = create_async_engine(sdk_database_url, pool_size=1)
    theirs = SQLAlchemySession(name, engine=engine)
    async with HarnessSession(name, base_url=live.url, token=live.agent_token) as ours:
        ours.client.retry = FAST_RETRY
        try:
            for step, operation in enumerate(operations):
                expected = await _apply(theirs, operation)
                got = await _apply(ours, operation)
                assert got == expected, f"call {step}: {operation!r}"
            assert await ours.get_items() == await theirs.get_items()
        finally:
            await engine.dispose()


# --- the SDK's contract, a few cases spelled out ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_one_line_session_from_the_environment_finds_or_creates_its_harness_session(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_URL", live.url)
    monkeypatch.setenv("HARNESS_TOKEN", live.agent_token)
    user = {"role": "user", "content": "Hi, I'm Ada"}
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}

    async def scenario() -> tuple[int, int, list[Any], Any]:
        async with HarnessSession("user-42") as first:
            assert isinstance(first, SdkSession)
            await first.add_items([user, call, output])
            first_id = await first.harness_id()
        async with HarnessSession("user-42", session_settings=SessionSettings(limit=2)) as again:
            items = await again.get_items()  # session_settings.limit applies
            popped = await again.pop_item()
            return first_id, await again.harness_id(), items, popped

    first_id, again_id, items, popped = run_async(scenario())

    assert first_id == again_id
    assert items == [call, output] and popped == output
    session = Session.objects.get(pk=first_id)
    assert (session.project_id, session.ref, session.metadata) == (
        live.project.pk, "user-42", {"agents_sdk_session_id": "user-42"})
    stored = SessionItem.objects.filter(session=session).order_by("seq")
    assert [(i.seq, i.role, i.content) for i in stored] == [(1, "user", user), (2, "assistant", call)]


def test_item_roles_come_from_the_item_or_its_type() -> None:
    assert [item_role(i) for i in (
        {"role": "user", "content": "x"}, {"role": "assistant", "type": "message", "content": []},
        {"role": "system", "content": "x"}, {"role": "developer", "content": "x"},
        {"type": "function_call", "call_id": "c"}, {"type": "function_call_output", "call_id": "c"},
        {"type": "computer_call_output"}, {"type": "reasoning", "summary": []}, {"type": "item_reference"}, {},
    )] == ["user", "assistant", "system", "system", "assistant", "tool", "tool", "assistant", "event", "event"]


def test_a_session_id_must_fit_a_harness_ref() -> None:
    with pytest.raises(ValueError, match="1 to 64"):
        HarnessSession("x" * 65, base_url="http://harness.test", token="hc_x")
    with pytest.raises(ValueError, match="1 to 64"):
        HarnessSession("", base_url="http://harness.test", token="hc_x")


@pytest.mark.django_db(transaction=True)
def test_more_than_the_newest_read_holds_is_read_page_by_page(live: Live) -> None:
    items = [{"role": "user", "content": n} for n in range(620)]

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        async with HarnessSession("long", base_url=live.url, token=live.agent_token) as session:
            await session.add_items(items)  # two appends: 500 and 120
            return await session.get_items(), await session.get_items(550), await session.get_items(500)

    everything, newest_550, newest_500 = run_async(scenario())
    assert everything == items and newest_550 == items[-550:] and newest_500 == items[-500:]


# --- retries: a lost reply stores nothing twice -----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_append_whose_reply_was_lost_is_stored_once(live: Live) -> None:
    recorder = AsyncRecorder(lose=posts_to("/items/"))
    items = [{"role": "user", "content": "once"}, {"type": "function_call", "call_id": "c", "name": "f",
                                                   "arguments": "{}"}]

    async def scenario() -> list[Any]:
        client = AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY, transport=recorder)
        async with client:
            session = HarnessSession("flaky", client)
            await session.add_items(items)
            return await session.get_items()

    assert run_async(scenario()) == items
    assert SessionItem.objects.filter(session__ref="flaky").count() == 2
    appends = [(request, response) for request, response in recorder.exchanges
               if request.method == "POST" and request.url.path.endswith("/items/")]
    (first, lost), (retry, replay) = appends
    assert lost is None and replay is not None and replay.headers["Idempotent-Replayed"] == "true"
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]


# --- tenant scope -------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_another_projects_token_cannot_read_pop_or_clear_the_session(live: Live) -> None:
    other_project = factories.make_project("otherco")
    _, other_token = factories.make_agent_token(other_project, name="other-agent")

    async def scenario() -> tuple[int, list[Any]]:
        async with HarnessSession("shared-name", base_url=live.url, token=live.agent_token) as ours:
            await ours.add_items([{"role": "user", "content": "private"}])
            harness_id = await ours.harness_id()
        async with AsyncHarnessClient(live.url, other_token, retry=FAST_RETRY) as other:
            for attempt in (other.latest_items(harness_id), other.pop_item(harness_id),
                            other.clear_items(harness_id), other.get_session(harness_id)):
                with pytest.raises(NotFoundError):
                    await attempt
            # The same SDK session id under the other token is the other project's own session.
            theirs = HarnessSession("shared-name", other)
            return harness_id, await theirs.get_items()

    harness_id, their_items = run_async(scenario())
    assert their_items == []
    assert list(SessionItem.objects.filter(session_id=harness_id).values_list("content", flat=True)) == [
        {"role": "user", "content": "private"}]
    assert Session.objects.get(project=other_project, ref="shared-name").pk != harness_id
