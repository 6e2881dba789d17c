"""Scenario 3, event streams: SSE fan-out latency and the relay's memory per idle subscriber.

Fan-out (1,000 subscribers on one world, the world emits 100 chat events, time from emission to
the last subscriber) is measured by `bench/sse_fanout.py`, owned by the streams work; this module
calls it. Idle subscribers are measured here: a fresh relay and fake world per run, 100 warm-up
streams held throughout, the relay's RSS read, then 10,000 more `/chat/subscribe` streams opened
by several `sse_hold` processes (one process cannot hold them all under the open-files limit),
the relay's own subscriber count confirmed through the fake world (`event-subscription-update`),
and the RSS read again. RSS per subscriber = the growth / 10,000. While the streams are held,
wrk then runs `GET /api/health` (the floor's request, 20 connections) for `HEALTH_SECONDS`: a
relay that holds 10,000 streams must still answer quickly (issue 15, target 5). The load lasts
longer than one keep-alive interval (15 s), so it covers a whole round of keep-alive comments,
the sweeps for gone clients (every second) and the checks of the streams' keys (every 5 s). The
same load runs once before the 10,000 connect (only the warm-up streams held): the difference is
what the streams cost, whatever else the machine is doing. The relay's RSS "in all" is the
larger of its RSS with the streams held and after that load.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import importlib.util
import math
from dataclasses import dataclass
from typing import Any

from bench import mixes
from bench.harness import Stack
from bench.procs import Child, python_argv, start
from bench.scenarios import Options, measured_run
from bench.stats import Spread, fmt_spread, kib, mib, table
from bench.wrkload import LoadResult
from vttrelay import protocol

FANOUT_SUBSCRIBERS = 1_000
FANOUT_EVENTS = 100
FANOUT_EVENTS_QUICK = 30
FANOUT_INTERVAL_MS = 50.0
IDLE_SUBSCRIBERS = 10_000
IDLE_SUBSCRIBERS_QUICK = 2_000
WARM_SUBSCRIBERS = 100
PER_HOLDER = 2_500
SETTLE_SECONDS = 1.0
HOLD_TIMEOUT = 180.0
HEALTH_CONNECTIONS = 20  # as the floor's first level
HEALTH_SECONDS = 16.0  # a keep-alive interval (15 s) and a bit
HEALTH_SECONDS_QUICK = 5.0


@dataclass(frozen=True)
class IdleRun:
    """One idle-subscriber run: how many streams, and the relay's RSS before and after."""

    subscribers: int
    counted: int  # what the relay announced to the world
    rss_before: int
    rss_after: int
    connect_s: float
    health: LoadResult  # GET /api/health under wrk while the streams are held
    rss_after_health: int
    health_warm: LoadResult  # the same load before, with only the warm-up streams

    @property
    def per_subscriber_kib(self) -> float:
        return kib(self.rss_after - self.rss_before) / self.subscribers

    @property
    def rss_total(self) -> int:
        """The relay's RSS in all while it holds the streams (with and without the load)."""
        return max(self.rss_after, self.rss_after_health)


@dataclass(frozen=True)
class IdleResult:
    runs: tuple[IdleRun, ...]

    @property
    def per_subscriber_kib(self) -> float:
        return Spread.of([r.per_subscriber_kib for r in self.runs]).median

    @property
    def rss_total(self) -> float:
        return Spread.of([r.rss_total for r in self.runs]).median

    @property
    def health_p99_ms(self) -> float:
        return Spread.of([r.health.p99_ms for r in self.runs]).median


@dataclass(frozen=True)
class FanoutResult:
    """What sse_fanout measured (median over runs), or why it could not run."""

    subscribers: int
    events: int
    p50_ms: float
    p99_ms: float
    runs: tuple[dict[str, Any], ...]
    note: str = ""
    kernel_p99_ms: float = math.nan  # the same, by the kernel's receipt in the sockets


@dataclass(frozen=True)
class StreamsResult:
    idle: IdleResult | None
    fanout: FanoutResult | None


async def hold(stack: Stack, count: int, name: str) -> Child:
    """Start one sse_hold process with `count` chat streams on the stack's world."""
    path = f"/chat/subscribe?clientId={stack.client_ids[0]}"
    child = await start(
        name,
        python_argv(
            "bench.sse_hold",
            "--url",
            stack.url,
            "--path",
            path,
            "--key",
            stack.api_key,
            "--count",
            str(count),
        ),
        cpu=stack.load_cpu,
        log_path=stack.workdir / f"{name}.log",
        pipes=True,
    )
    stack.pids.append(child.pid)
    return child


async def subscriber_count(stack: Stack, want: int, timeout: float) -> int:
    """The chat subscriber count the relay last announced to the world (waits for `want`)."""
    assert stack.world is not None
    await stack.world.send(f"subs {protocol.CHAT_CHANNEL} {want} {timeout:g}")
    return int(await stack.world.expect("SUBS", timeout + 5))


async def idle_run(opts: Options, index: int, subscribers: int, health_s: float) -> IdleRun:
    workdir = opts.workdir / f"idle-{index}"
    holders: list[Child] = []
    async with Stack(workdir, worlds=1, pin=opts.pin, relay_args=opts.relay_args) as stack:
        assert stack.relay is not None
        health_file = mixes.write(workdir / "health.txt", list(mixes.HEALTH))
        try:
            warm = await hold(stack, WARM_SUBSCRIBERS, "warm")
            holders.append(warm)
            await warm.expect("HELD", HOLD_TIMEOUT)
            await subscriber_count(stack, WARM_SUBSCRIBERS, 10)
            warm_health = await measured_run(stack, health_file, HEALTH_CONNECTIONS, health_s)
            await asyncio.sleep(SETTLE_SECONDS)
            before = stack.relay.rss_bytes()
            loop = asyncio.get_running_loop()
            started = loop.time()
            sizes = [PER_HOLDER] * (subscribers // PER_HOLDER)
            if subscribers % PER_HOLDER:
                sizes.append(subscribers % PER_HOLDER)
            for i, size in enumerate(sizes):
                holders.append(await hold(stack, size, f"hold-{i}"))
            for child in holders[1:]:
                await child.expect("HELD", HOLD_TIMEOUT)
            connect_s = loop.time() - started
            counted = await subscriber_count(stack, WARM_SUBSCRIBERS + subscribers, 30)
            await asyncio.sleep(SETTLE_SECONDS)
            after = stack.relay.rss_bytes()
            health = (await measured_run(stack, health_file, HEALTH_CONNECTIONS, health_s)).load
            after_health = stack.relay.rss_bytes()
        finally:
            for child in holders:
                await child.stop()
    return IdleRun(
        subscribers,
        counted - WARM_SUBSCRIBERS,
        before,
        after,
        connect_s,
        health,
        after_health,
        warm_health.load,
    )


async def idle(opts: Options, quick: bool) -> IdleResult:
    count = IDLE_SUBSCRIBERS_QUICK if quick else IDLE_SUBSCRIBERS
    health_s = HEALTH_SECONDS_QUICK if quick else HEALTH_SECONDS
    return IdleResult(tuple([await idle_run(opts, i, count, health_s) for i in range(opts.runs)]))


async def fanout(opts: Options, quick: bool) -> FanoutResult:
    """Scenario 3's fan-out part: `opts.runs` runs of bench/sse_fanout.py's `run()`."""
    if importlib.util.find_spec("bench.sse_fanout") is None:
        return FanoutResult(0, 0, math.nan, math.nan, (), "bench/sse_fanout.py is not present")
    module = importlib.import_module("bench.sse_fanout")
    events = FANOUT_EVENTS_QUICK if quick else FANOUT_EVENTS
    runs = [
        await module.run(FANOUT_SUBSCRIBERS, events, FANOUT_INTERVAL_MS, opts.pin)
        for _ in range(opts.runs)
    ]
    return FanoutResult(
        subscribers=FANOUT_SUBSCRIBERS,
        events=events,
        p50_ms=Spread.of([r.last_p50 for r in runs]).median,
        p99_ms=Spread.of([r.last_p99 for r in runs]).median,
        kernel_p99_ms=Spread.of([r.kernel_last_p99 for r in runs]).median,
        runs=tuple(
            dataclasses.asdict(r) | {"per_subscriber_kib": kib(r.per_subscriber)} for r in runs
        ),
    )


async def run(opts: Options, quick: bool = False) -> StreamsResult:
    fan = await fanout(opts, quick)
    return StreamsResult(idle=await idle(opts, quick), fanout=fan)


def render(result: StreamsResult) -> str:
    parts = []
    if result.fanout is not None:
        fan = result.fanout
        if fan.note:
            parts.append(f"fan-out: not measured ({fan.note})")
        else:
            runs = fan.runs
            parts.append(
                table(
                    (
                        "fan-out: emission -> last subscriber",
                        "events",
                        "delivered",
                        "p50 ms",
                        "p99 ms",
                        "max ms",
                        "kernel receipt p99 ms",
                        "relay CPU s",
                        "KiB per subscriber",
                    ),
                    [
                        [
                            f"{fan.subscribers:,} subscribers, one world",
                            str(fan.events),
                            fmt_spread(Spread.of([r["delivered"] * 100 for r in runs]), 2) + " %",
                            fmt_spread(Spread.of([r["last_p50"] for r in runs]), 1),
                            fmt_spread(Spread.of([r["last_p99"] for r in runs]), 1),
                            fmt_spread(Spread.of([r["last_max"] for r in runs]), 1),
                            fmt_spread(Spread.of([r["kernel_last_p99"] for r in runs]), 1),
                            fmt_spread(Spread.of([r["relay_cpu"] for r in runs]), 2),
                            fmt_spread(Spread.of([r["per_subscriber_kib"] for r in runs]), 1),
                        ]
                    ],
                )
            )
    if result.idle is not None:
        idle_runs = result.idle.runs
        parts.append(
            table(
                (
                    "idle subscribers",
                    "counted by relay",
                    "connect s",
                    "RSS before MiB",
                    "RSS after MiB",
                    "KiB per subscriber",
                    "RSS in all MiB",
                    f"health held: req/s at {HEALTH_CONNECTIONS}",
                    "health p50 ms",
                    "health p99 ms",
                    f"health p99 ms, {WARM_SUBSCRIBERS} held",
                    "health errors",
                ),
                [
                    [
                        str(idle_runs[0].subscribers),
                        fmt_spread(Spread.of([r.counted for r in idle_runs]), 0),
                        fmt_spread(Spread.of([r.connect_s for r in idle_runs]), 1),
                        fmt_spread(Spread.of([mib(r.rss_before) for r in idle_runs]), 1),
                        fmt_spread(Spread.of([mib(r.rss_after) for r in idle_runs]), 1),
                        fmt_spread(Spread.of([r.per_subscriber_kib for r in idle_runs]), 1),
                        fmt_spread(Spread.of([mib(r.rss_total) for r in idle_runs]), 1),
                        fmt_spread(Spread.of([r.health.rps for r in idle_runs]), 0),
                        fmt_spread(Spread.of([r.health.p50_ms for r in idle_runs]), 2),
                        fmt_spread(Spread.of([r.health.p99_ms for r in idle_runs]), 2),
                        fmt_spread(Spread.of([r.health_warm.p99_ms for r in idle_runs]), 2),
                        str(
                            sum(
                                r.health.non_2xx + r.health.timeouts + r.health.socket_errors
                                for r in idle_runs
                            )
                        ),
                    ]
                ],
            )
        )
    return "\n\n".join(parts)
