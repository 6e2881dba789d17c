"""The load scenarios of issue 6 that use wrk: forwarded mix, health floor, many worlds, RSS flat.

Each level (a number of concurrent connections) gets a fresh relay and fake world (`Stack`), a
one-second wrk warm-up that is not counted, then `runs` measured wrk runs. For every run the relay's
CPU seconds and RSS are read from /proc before and after, so CPU per 1,000 requests is the relay's
own cost, whatever else the machine is doing.
"""

from __future__ import annotations

import resource
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import mixes
from bench.harness import Stack
from bench.mixes import Request
from bench.procs import listen_overflows
from bench.stats import Spread, fmt_number, fmt_spread, mib, table
from bench.wrkload import LoadResult, run_wrk

WARMUP_SECONDS = 1.0
WRK_TIMEOUT = 5.0  # a request slower than this counts as a timeout
MANY_WORLDS = 500


@dataclass(frozen=True)
class Options:
    """What `python -m bench` was asked for."""

    workdir: Path
    runs: int = 3
    duration: float = 10.0
    pin: bool = False
    levels: tuple[int, ...] = (20, 200)
    rss_runs: int = 5
    rss_level: int = 200
    relay_args: tuple[str, ...] = ()  # extra arguments of bench.relay_server
    conns: tuple[int, ...] = ()  # only these connection levels of each scenario (all: empty)


@dataclass(frozen=True)
class Run:
    """One measured wrk run and the relay's CPU and memory around it."""

    load: LoadResult
    cpu_s: float
    rss_before: int
    rss_after: int
    load_side_cores: float = float("nan")  # wrk + fake world CPU seconds per second of load
    listen_overflows: int = 0  # connects the kernel dropped: the relay's accept queue was full

    @property
    def cpu_per_1k(self) -> float:
        return self.cpu_s / self.load.requests * 1000 if self.load.requests else float("nan")


@dataclass(frozen=True)
class Level:
    """All runs of one scenario at one concurrency."""

    scenario: str
    connections: int
    runs: tuple[Run, ...]

    def spread(self, attr: str) -> Spread:
        values: list[float] = []
        for run in self.runs:
            if hasattr(run.load, attr):
                values.append(float(getattr(run.load, attr)))
            else:
                values.append(float(getattr(run, attr)))
        return Spread.of(values)


async def measured_run(stack: Stack, requests_file: Path, connections: int, seconds: float) -> Run:
    """One wrk run against `stack`, with the relay side's CPU and RSS around it (one relay
    process; scaled out, every relay process and worker and Redis)."""
    cpu0, rss0 = stack.relay_cpu_seconds(), stack.relay_rss_bytes()
    world0 = stack.world.cpu_seconds() if stack.world is not None else 0.0
    wrk0 = children_cpu_seconds()
    overflows0 = listen_overflows()
    load = await run_wrk(
        stack.url,
        requests_file,
        stack.api_key,
        connections=connections,
        duration=seconds,
        cpu=stack.load_cpu,
        timeout=WRK_TIMEOUT,
    )
    cpu_s = stack.relay_cpu_seconds() - cpu0
    world_s = (stack.world.cpu_seconds() - world0) if stack.world is not None else 0.0
    load_side = (children_cpu_seconds() - wrk0 + world_s) / max(load.duration_s, 1e-9)
    overflows = listen_overflows() - overflows0
    return Run(load, cpu_s, rss0, stack.relay_rss_bytes(), load_side, overflows)


def children_cpu_seconds() -> float:
    """CPU seconds of this process's reaped children (only wrk is reaped during a run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class LoadScenario:
    """A wrk scenario: which mix, the fake world's reply set, the connection levels, worlds."""

    mix: str  # "forwarded" (mixes.FORWARDED), "floor" (mixes.HEALTH), "spread" (over worlds)
    replies: str  # bench.replies.REPLY_SETS
    levels: tuple[int, ...]
    worlds: int = 1


# Issue 15 measures the forwarded mix with small replies (its targets 1 and 3: cost against the
# floor, p99 at 20, no error at 1,000 connections) and with the recorded 22 KB
# get-actor-details reply (target 2); `forwarded-recorded` has every recorded reply (/get's is
# 52 KB), what `forwarded` measured before issue 15.
LOAD_SCENARIOS: dict[str, LoadScenario] = {
    "forwarded": LoadScenario("forwarded", "small", (20, 200, 1000)),
    "forwarded-22k": LoadScenario("forwarded", "actor", (20,)),
    "forwarded-recorded": LoadScenario("forwarded", "recorded", (20, 200)),
    "floor": LoadScenario("floor", "small", (20, 200)),
    "worlds": LoadScenario("spread", "recorded", (20, 200), MANY_WORLDS),
}


def requests_for(scenario: str, client_ids: Sequence[str]) -> list[Request]:
    """The request list of a scenario: the mix, aimed at the stack's world(s)."""
    spec = LOAD_SCENARIOS.get(scenario)
    if spec is None:
        raise ValueError(f"unknown wrk scenario {scenario!r}")
    if spec.mix == "forwarded":
        return mixes.for_world(mixes.FORWARDED, client_ids[0])
    if spec.mix == "floor":
        return list(mixes.HEALTH)
    return mixes.spread(mixes.FORWARDED, client_ids)


async def run_level(opts: Options, scenario: str, connections: int) -> Level:
    """A fresh stack, a warm-up, then `opts.runs` measured runs."""
    spec = LOAD_SCENARIOS[scenario]
    workdir = opts.workdir / f"{scenario}-{connections}"
    async with Stack(
        workdir,
        worlds=spec.worlds,
        pin=opts.pin,
        relay_args=opts.relay_args,
        replies=spec.replies,
    ) as stack:
        requests_file = mixes.write(
            workdir / "requests.txt", requests_for(scenario, stack.client_ids)
        )
        await measured_run(stack, requests_file, connections, WARMUP_SECONDS)
        runs = [
            await measured_run(stack, requests_file, connections, opts.duration)
            for _ in range(opts.runs)
        ]
    return Level(scenario, connections, tuple(runs))


async def load_scenario(opts: Options, scenario: str) -> list[Level]:
    levels = [c for c in LOAD_SCENARIOS[scenario].levels if not opts.conns or c in opts.conns]
    return [await run_level(opts, scenario, c) for c in levels]


@dataclass(frozen=True)
class RssFlat:
    """RSS of one relay after each of several repeated scenario-1 runs."""

    connections: int
    runs: tuple[Run, ...]

    @property
    def baseline(self) -> int:
        return self.runs[0].rss_after

    @property
    def drift(self) -> float:
        """Largest relative distance of a run's RSS from the first run's."""
        base = self.baseline
        return max(abs(r.rss_after - base) / base for r in self.runs)


async def rss_flat(opts: Options) -> RssFlat:
    """One relay, a warm-up, then `opts.rss_runs` runs of the forwarded mix."""
    workdir = opts.workdir / "rss"
    async with Stack(workdir, worlds=1, pin=opts.pin, relay_args=opts.relay_args) as stack:
        requests_file = mixes.write(
            workdir / "requests.txt", requests_for("forwarded", stack.client_ids)
        )
        await measured_run(stack, requests_file, opts.rss_level, WARMUP_SECONDS)
        runs = [
            await measured_run(stack, requests_file, opts.rss_level, opts.duration)
            for _ in range(opts.rss_runs)
        ]
    return RssFlat(opts.rss_level, tuple(runs))


# Tables ---------------------------------------------------------------------------------------

LOAD_HEADERS = (
    "scenario",
    "conns",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU s/1k req",
    "1-core ceiling req/s",
    "RSS before MiB",
    "RSS after MiB",
    "non-2xx",
    "timeouts",
    "sock err",
    "listen overflows",
    "wrk+world core %",
)


def load_rows(levels: Sequence[Level]) -> list[list[str]]:
    rows = []
    for lv in levels:
        rows.append(
            [
                lv.scenario,
                str(lv.connections),
                fmt_spread(lv.spread("rps"), 0),
                fmt_spread(lv.spread("p50_ms"), 2),
                fmt_spread(lv.spread("p99_ms"), 2),
                fmt_spread(lv.spread("cpu_per_1k"), 3),
                fmt_number(1000 / lv.spread("cpu_per_1k").median, 0),
                fmt_spread(Spread.of([mib(r.rss_before) for r in lv.runs]), 1),
                fmt_spread(Spread.of([mib(r.rss_after) for r in lv.runs]), 1),
                str(sum(r.load.non_2xx for r in lv.runs)),
                str(sum(r.load.timeouts for r in lv.runs)),
                str(sum(r.load.socket_errors for r in lv.runs)),
                str(sum(r.listen_overflows for r in lv.runs)),
                fmt_spread(Spread.of([r.load_side_cores * 100 for r in lv.runs]), 0),
            ]
        )
    return rows


def load_table(levels: Sequence[Level]) -> str:
    """Median (min-max) over the runs; error columns are totals over the runs. The 1-core
    ceiling is 1,000 / (median CPU s per 1k requests): what the relay would serve with a whole
    core to itself, however busy the machine was during the run."""
    return table(LOAD_HEADERS, load_rows(levels))


def rss_table(result: RssFlat) -> str:
    rows = [
        [str(i + 1), fmt_number(r.load.rps, 0), fmt_number(mib(r.rss_after), 1)]
        for i, r in enumerate(result.runs)
    ]
    rows.append(["drift", "", f"{result.drift * 100:.1f} % of run 1"])
    return table(("run", "req/s", "RSS after MiB"), rows)
