"""The measuring machinery: N client processes run one operation in a loop for a fixed time.

Each client sets up its own state (own database connection), waits at a barrier with the others,
warms up, then records the latency of every operation. The parent merges the latencies into
ops/s, p50 and p99, and takes the peak resident memory of the clients.
"""

from __future__ import annotations

import asyncio
import inspect
import multiprocessing as mp
import os
import resource
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connections

Setup = Callable[[int], Any]
Op = Callable[[Any], Any]


@dataclass
class Measure:
    scenario: str
    subject: str
    clients: int
    ops: int
    seconds: float
    p50_ms: float
    p99_ms: float
    peak_rss_mb: float
    extra: dict = field(default_factory=dict)

    @property
    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0


@dataclass
class Settings:
    duration: float = 12.0
    warmup: float = 2.0
    clients: tuple[int, ...] = (1, 8)
    soak_seconds: float = 600.0  # scenario 9's soak
    resumes: int = 10_000  # scenario 9: runs the resume worker resumes before the soak (phase 1)
    rounds: int = 3  # compared subjects take turns this many times (measure_turns)
    growth_size: int = 100_000  # scenario 8: the large fixture's size (bench.scenarios_growth.Shape)
    growth_retention: bool = True  # scenario 8: its retention rows too (bench.retention_growth)


def _percentile(sorted_values: array, q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, int(round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def _client(index: int, setup: Setup, op: Op, teardown: Callable[[Any], Any] | None, barrier: Any,
            duration: float, warmup: float, out: Any) -> None:
    try:
        state = setup(index)
        is_async = inspect.iscoroutinefunction(op)
        latencies = array("d")
        barrier.wait(timeout=120)

        acked = [0]

        async def loop_async() -> int:
            end_warm = time.perf_counter() + warmup
            while time.perf_counter() < end_warm:
                await op(state)
                acked[0] += 1
            end = time.perf_counter() + duration
            count = 0
            while True:
                t0 = time.perf_counter()
                if t0 >= end:
                    return count
                await op(state)
                latencies.append((time.perf_counter() - t0) * 1000)
                count += 1
                acked[0] += 1

        def loop_sync() -> int:
            end_warm = time.perf_counter() + warmup
            while time.perf_counter() < end_warm:
                op(state)
                acked[0] += 1
            end = time.perf_counter() + duration
            count = 0
            perf = time.perf_counter
            while True:
                t0 = perf()
                if t0 >= end:
                    return count
                op(state)
                latencies.append((perf() - t0) * 1000)
                count += 1
                acked[0] += 1

        if is_async:
            loop = state.get("loop") if isinstance(state, dict) else None
            loop = loop or asyncio.new_event_loop()
            count = loop.run_until_complete(loop_async())
        else:
            count = loop_sync()
        if teardown is not None:
            teardown(state)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out.put((index, count, latencies.tobytes(), rss_mb, None, acked[0]))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        import traceback

        out.put((index, 0, b"", 0.0, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}", 0))
    finally:
        connections.close_all()
        out.close()
        out.join_thread()  # flush the result before the hard exit below
        os._exit(0)


@dataclass
class Subject:
    """One thing a scenario measures: each client process runs `setup(index)` once, then `op(state)`."""

    name: str
    setup: Setup
    op: Op
    teardown: Callable[[Any], Any] | None = None


@dataclass
class _Run:
    ops: int
    latencies: array
    peak_rss_mb: float
    acknowledged: int


def _run_clients(subject: Subject, *, clients: int, duration: float, warmup: float) -> _Run:
    """`clients` processes run the subject's op for `duration` seconds after `warmup`; their results merged."""
    connections.close_all()  # never share a parent connection with forked children
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(clients)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_client, args=(i, subject.setup, subject.op, subject.teardown, barrier, duration, warmup,
                                          out))
        for i in range(clients)
    ]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=duration + warmup + 300) for _ in procs]
    for proc in procs:
        proc.join(30)
    errors = [r[4] for r in results if r[4]]
    if errors:
        raise RuntimeError(f"{subject.name}: a client failed: {errors[0]}")
    merged = array("d")
    for _, _, raw, _, _, _ in results:
        part = array("d")
        part.frombytes(raw)
        merged.extend(part)
    return _Run(ops=sum(r[1] for r in results), latencies=merged, peak_rss_mb=max(r[3] for r in results),
                acknowledged=sum(r[5] for r in results))


def _merge(scenario: str, subject: str, clients: int, seconds: float, runs: list[_Run]) -> Measure:
    merged = array("d", sorted(x for run in runs for x in run.latencies))
    return Measure(
        scenario=scenario, subject=subject, clients=clients, ops=sum(run.ops for run in runs), seconds=seconds,
        p50_ms=_percentile(merged, 0.50), p99_ms=_percentile(merged, 0.99),
        peak_rss_mb=max(run.peak_rss_mb for run in runs),
        extra={"acknowledged": sum(run.acknowledged for run in runs)},
    )


def measure(scenario: str, subject: str, *, setup: Setup, op: Op, clients: int, settings: Settings,
            teardown: Callable[[Any], Any] | None = None) -> Measure:
    """Run `op` in `clients` processes for settings.duration seconds after a warm-up."""
    run = _run_clients(Subject(subject, setup, op, teardown), clients=clients, duration=settings.duration,
                       warmup=settings.warmup)
    return _merge(scenario, subject, clients, settings.duration, [run])


def measure_turns(scenario: str, subjects: list[Subject], *, clients: int, settings: Settings) -> list[Measure]:
    """Measure subjects that are compared with each other by taking turns: `settings.rounds` rounds, in
    each of which every subject runs for duration / rounds seconds (after its warm-up, in fresh client
    processes); each subject's rounds are merged into one Measure of `settings.duration` seconds.

    This VM's speed drifts by tens of percent within minutes (a peer measured 772/s in one run and
    1,769/s in the next). Measured one after the other in one block each, two subjects can land in
    different weather; taking turns gives each the same, so the ratio of one run means more.
    A subject's setup runs again in every round: state it keeps must be read back, not counted from 0.
    """
    per_round = settings.duration / settings.rounds
    runs: dict[str, list[_Run]] = {s.name: [] for s in subjects}
    for _ in range(settings.rounds):
        for subject in subjects:
            runs[subject.name].append(_run_clients(subject, clients=clients, duration=per_round,
                                                   warmup=settings.warmup))
    return [_merge(scenario, s.name, clients, settings.duration, runs[s.name]) for s in subjects]
