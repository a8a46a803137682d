"""LangGraph's published checkpointer conformance suite (`langgraph-checkpoint-conformance`) against HarnessSaver
on a live server, with every capability: the base ones (put, put_writes, get_tuple, list, delete_thread) and the
extended ones (delete_for_runs, copy_thread, prune). Once through the saver's async methods (what the suite calls)
and once through its sync methods (an adapter whose async methods run the sync ones in a worker thread)."""

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from harness_client import AsyncHarnessClient, HarnessClient
from harness_client.langgraph import HarnessSaver
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.report import CapabilityReport

from tests.client.conftest import FAST_RETRY, Live, run_async

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class SyncDriven(HarnessSaver):
    """The suite drives async methods only: these run the saver's sync ones, each in a worker thread."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None,
                    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


def _validate(live: Live, *, sync: bool) -> CapabilityReport:
    async def run() -> CapabilityReport:
        async def factory() -> AsyncIterator[HarnessSaver]:
            if sync:
                with HarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
                    yield SyncDriven(client=client)
            else:
                async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
                    yield HarnessSaver(client=client)

        registered = checkpointer_test(name=f"HarnessSaver-{'sync' if sync else 'async'}")(factory)
        return await validate(registered)

    return run_async(run())


def _assert_all_passed(report: CapabilityReport) -> None:
    failures = {cap: result.failures for cap, result in report.results.items() if result.failures}
    assert not failures, failures
    assert {cap for cap, result in report.results.items() if result.detected} == {c.value for c in ALL_CAPABILITIES}
    for cap, result in report.results.items():
        assert result.passed is True and result.tests_passed > 0 and result.tests_failed == 0, (cap, result)


def test_the_async_saver_passes_every_capability(live: Live) -> None:
    _assert_all_passed(_validate(live, sync=False))


def test_the_sync_saver_passes_every_capability(live: Live) -> None:
    _assert_all_passed(_validate(live, sync=True))


