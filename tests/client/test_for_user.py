"""`client.for_user(...)`: a client bound to one end user through a narrowed token it mints and renews (issue 30),
and the Agents SDK session that uses it."""

import pytest
from django.utils import timezone
from harness_client import AsyncHarnessClient, HarnessClient, NotFoundError, PermissionDenied
from harness_client.agents import HarnessSession

from harness.models import ApiToken
from sessions_app.models import Session
from tests.client.conftest import FAST_RETRY, Live, run_async


def test_a_client_for_a_user_reaches_only_that_users_sessions_and_memory(hc: HarnessClient) -> None:
    other = hc.create_session(ref="other-user-chat", end_user="u-2")
    alice = hc.for_user("u-17")
    mine = alice.create_session(ref="alice-chat")
    assert mine.end_user == "u-17"
    assert [s.id for s in alice.list_sessions()] == [mine.id]
    with pytest.raises(NotFoundError):
        alice.get_session(other.id)
    wrote = alice.propose_memory(scope="user", content="prefers short answers", source_session_id=mine.id)
    assert wrote.record is not None and wrote.record.scope_key == "u-17"
    with pytest.raises(PermissionDenied) as refused:
        alice.retrieve_memory(scope="user", scope_key="u-2")
    assert refused.value.code == "end_user_scope"
    with pytest.raises(PermissionDenied) as cannot:
        alice.narrow_token("u-3")
    assert cannot.value.code == "narrowed_token_cannot_mint"
    with pytest.raises(ValueError, match="cannot make another"):
        alice.for_user("u-3")


def test_the_client_mints_again_before_its_token_expires_and_after_a_401(hc: HarnessClient) -> None:
    alice = hc.for_user("u-17", expires_in=600)
    list(alice.list_sessions())
    assert ApiToken.objects.filter(end_user="u-17").count() == 1
    list(alice.list_sessions())  # still fresh: the same token
    assert ApiToken.objects.filter(end_user="u-17").count() == 1
    narrowing = alice._narrowing
    assert narrowing is not None
    narrowing.renew_at = 0.0  # as when 80% of its life has passed
    list(alice.list_sessions())
    assert ApiToken.objects.filter(end_user="u-17").count() == 2
    ApiToken.objects.filter(end_user="u-17").update(revoked_at=timezone.now())  # refused early: 401
    list(alice.list_sessions())
    assert ApiToken.objects.filter(end_user="u-17", revoked_at__isnull=True).count() == 1


def test_an_agents_sdk_session_for_an_end_user_is_that_users(live: Live) -> None:
    async def scenario() -> tuple[int, list[object]]:
        client = AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY)
        try:
            async with HarnessSession("chat-1", client, end_user="u-17") as session:
                await session.add_items([{"role": "user", "content": "hello"}])
                return await session.harness_id(), await session.get_items()
        finally:
            await client.aclose()

    harness_id, items = run_async(scenario())
    assert Session.objects.get(pk=harness_id).end_user == "u-17"
    assert items == [{"role": "user", "content": "hello"}]
