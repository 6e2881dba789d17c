"""The scale-out scenarios of issue 12: one hop between instances, and `--workers 2`.

- `hop`: the forwarded mix against three set-ups, each on a fresh stack: one relay process
  without Redis (the default), two relay processes over one Redis with the load sent to the one
  that holds the world (`same instance`), and the same two with the load sent to the other one,
  so every call takes the hop through Redis to the world's instance and back (`cross instance`).
  At 1 connection the latency difference is the hop itself; at 20 the CPU column says what the
  hop costs the relay side (both relays and Redis). With `--pin`, the relay side shares core 0
  and wrk and the fake world core 1, as in the other scenarios.
- `workers`: the forwarded mix against one relay process and against `--workers 2` (over Redis),
  with one world (on one worker: about half the calls hop to it) and with `SPREAD_WORLDS` worlds
  (the mix spread over them; they land on both workers), the fake world answering with the
  `forwarded` scenario's replies, never pinned: the workers are there to
  use both cores, and so wrk and the fake world share those cores with them. The table shows,
  per set-up, the cores the relay side used (its CPU seconds per second of load, workers and
  Redis included) and the cores wrk and the fake world used: on this 2-core machine the sum is
  what the machine had, and the load side's share is CPU the relay could not have.

  Because wrk and the fake world run on the same two cores, the req/s of `--workers 2` is not
  what it would serve with the load generator elsewhere. `capacity` accounts for that from the
  relay side's own CPU per request: the req/s at which the relay side would use all the cores
  it may use (one process: 1 core; `--workers N`: N cores), and no process more than its one
  core (the busiest process, usually the worker that holds the world, saturates first):
  `min(cores / CPU per request of the whole relay side, 1 / CPU per request of the busiest
  process)`. `--workers 2 / one process` is the ratio of the capacities (same worlds, same
  connections): the row of the targets table.

Cells are median (min-max) over the runs; the added latency is the median of the cross-instance
runs minus the median of the same-instance runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import mixes
from bench.harness import Stack
from bench.procs import Child, cpu_seconds, descendants
from bench.scenarios import (
    LOAD_SCENARIOS,
    WARMUP_SECONDS,
    Level,
    Options,
    Run,
    measured_run,
    requests_for,
)
from bench.stats import Spread, fmt_number, fmt_spread, table

HOP_LEVELS = (1, 20)
SPREAD_WORLDS = 100
TARGET_RATIO = 1.6  # issue 15, target 6: --workers 2 >= 1.6 x one worker


@dataclass(frozen=True)
class Setup:
    """One way to run the relay: how many instances and workers, where the load goes."""

    name: str
    instances: int = 1
    workers: int = 1
    target: int = 0
    pin: bool = True  # honour --pin (the workers set-up never pins)
    worlds: int = 1  # more than 1: the forwarded mix spread over that many worlds


HOP_SETUPS = (
    Setup("one process, no Redis"),
    Setup("2 instances, same instance", instances=2, target=0),
    Setup("2 instances, cross instance", instances=2, target=1),
)
WORKER_SETUPS = (
    Setup("one process", pin=False),
    Setup("--workers 2 (Redis)", workers=2, pin=False),
    Setup(f"one process, {SPREAD_WORLDS} worlds", pin=False, worlds=SPREAD_WORLDS),
    Setup(
        f"--workers 2 (Redis), {SPREAD_WORLDS} worlds", workers=2, pin=False, worlds=SPREAD_WORLDS
    ),
)


def worker_pids(relay: Child) -> list[int]:
    """The worker processes of a `--workers` relay (multiprocessing's spawned children, not its
    resource tracker)."""
    found = []
    for pid in descendants(relay.pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            found.append(pid)
    return sorted(found)


def relay_processes(stack: Stack) -> list[int]:
    """Every process of the relay side that runs on its own: the relays (or, `--workers`, the
    workers) and Redis."""
    pids: list[int] = []
    for relay in stack.relays:
        pids.extend(worker_pids(relay) if stack.workers > 1 else [relay.pid])
    if stack.redis is not None:
        pids.append(stack.redis.pid)
    return pids


@dataclass(frozen=True)
class ScaleRun:
    """One measured run, and the CPU seconds of the busiest relay-side process during it."""

    run: Run
    busiest_cpu_s: float
    cores: float = 1.0  # the cores the relay side may use: 1 for one process, N for N workers

    @property
    def capacity(self) -> float:
        """req/s with the relay side on all the cores it may use (the module docstring)."""
        requests = self.run.load.requests
        if not requests or self.run.cpu_s <= 0 or self.busiest_cpu_s <= 0:
            return float("nan")
        return min(self.cores / (self.run.cpu_s / requests), requests / self.busiest_cpu_s)


@dataclass(frozen=True)
class SetupLevel:
    """The runs of one set-up at one concurrency."""

    setup: Setup
    level: Level
    scale_runs: tuple[ScaleRun, ...] = ()

    def capacity(self) -> Spread:
        return Spread.of([r.capacity for r in self.scale_runs])


async def run_setup(opts: Options, setup: Setup, connections: int) -> SetupLevel:
    """A fresh stack for the set-up, a warm-up, then `opts.runs` measured runs."""
    slug = setup.name.replace(" ", "-").replace(",", "").replace("(", "").replace(")", "")
    workdir = opts.workdir / f"{slug}-{connections}"
    stack = Stack(
        workdir,
        worlds=setup.worlds,
        replies=LOAD_SCENARIOS["forwarded"].replies,
        pin=opts.pin and setup.pin,
        relay_args=opts.relay_args,
        instances=setup.instances,
        workers=setup.workers,
        target=setup.target,
    )
    async with stack:
        scenario = "worlds" if setup.worlds > 1 else "forwarded"
        requests_file = mixes.write(
            workdir / "requests.txt", requests_for(scenario, stack.client_ids)
        )
        await measured_run(stack, requests_file, connections, WARMUP_SECONDS)
        cores = float(min(setup.workers * setup.instances, os.cpu_count() or 1))
        scale_runs = []
        for _ in range(opts.runs):
            pids = relay_processes(stack)
            before = [cpu_seconds(pid) for pid in pids]
            run = await measured_run(stack, requests_file, connections, opts.duration)
            busiest = max(cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True))
            scale_runs.append(ScaleRun(run, busiest, cores))
    runs = tuple(r.run for r in scale_runs)
    return SetupLevel(setup, Level(setup.name, connections, runs), tuple(scale_runs))


async def hop(opts: Options) -> list[SetupLevel]:
    return [await run_setup(opts, s, c) for c in HOP_LEVELS for s in HOP_SETUPS]


async def workers(opts: Options) -> list[SetupLevel]:
    levels = [c for c in opts.levels if not opts.conns or c in opts.conns]
    return [await run_setup(opts, s, c) for c in levels for s in WORKER_SETUPS]


def _relay_cores(level: Level) -> Spread:
    return Spread.of([r.cpu_s / r.load.duration_s for r in level.runs])


def hop_table(results: Sequence[SetupLevel]) -> str:
    rows: list[list[str]] = []
    same: dict[int, Level] = {
        r.level.connections: r.level
        for r in results
        if r.setup.target == 0 and r.setup.instances > 1
    }
    for result in results:
        lv = result.level
        added = ""
        base = same.get(lv.connections)
        if result.setup.target == 1 and base is not None:
            p50 = lv.spread("p50_ms").median - base.spread("p50_ms").median
            p99 = lv.spread("p99_ms").median - base.spread("p99_ms").median
            added = f"{p50:+.2f} / {p99:+.2f}"
        rows.append(
            [
                result.setup.name,
                str(lv.connections),
                fmt_spread(lv.spread("rps"), 0),
                fmt_spread(lv.spread("p50_ms"), 2),
                fmt_spread(lv.spread("p99_ms"), 2),
                added,
                fmt_spread(lv.spread("cpu_per_1k"), 3),
                str(sum(r.load.non_2xx + r.load.timeouts + r.load.socket_errors for r in lv.runs)),
            ]
        )
    headers = (
        "set-up",
        "conns",
        "req/s",
        "p50 ms",
        "p99 ms",
        "hop adds p50 / p99 ms",
        "relay side CPU s/1k req",
        "errors",
    )
    return table(headers, rows)


def _one_process(results: Sequence[SetupLevel], result: SetupLevel) -> SetupLevel | None:
    """The one-process result with the same worlds and connections as `result`."""
    for other in results:
        same = other.setup.worlds == result.setup.worlds
        if (
            same
            and other.setup.workers == 1
            and other.level.connections == result.level.connections
        ):
            return other
    return None


def capacity_ratio(results: Sequence[SetupLevel], result: SetupLevel) -> float:
    """`result`'s capacity over one process's (median over the runs of each)."""
    base = _one_process(results, result)
    if base is None or result.setup.workers == 1:
        return float("nan")
    return result.capacity().median / base.capacity().median


def workers_table(results: Sequence[SetupLevel]) -> str:
    rows: list[list[str]] = []
    for result in results:
        lv = result.level
        relay = _relay_cores(lv)
        load = Spread.of([r.load_side_cores for r in lv.runs])
        busiest = Spread.of(
            [r.busiest_cpu_s / r.run.load.requests * 1000 for r in result.scale_runs]
        )
        ratio = capacity_ratio(results, result)
        rows.append(
            [
                result.setup.name,
                str(lv.connections),
                fmt_spread(lv.spread("rps"), 0),
                fmt_spread(lv.spread("p50_ms"), 2),
                fmt_spread(lv.spread("p99_ms"), 2),
                fmt_spread(lv.spread("cpu_per_1k"), 3),
                fmt_spread(busiest, 3),
                fmt_spread(relay, 2),
                fmt_spread(load, 2),
                fmt_number(relay.median + load.median, 2),
                fmt_spread(result.capacity(), 0),
                "" if math.isnan(ratio) else f"{ratio:.2f}x",
                str(sum(r.load.non_2xx + r.load.timeouts + r.load.socket_errors for r in lv.runs)),
            ]
        )
    headers = (
        "set-up",
        "conns",
        "req/s",
        "p50 ms",
        "p99 ms",
        "relay side CPU s/1k req",
        "busiest process CPU s/1k req",
        "relay side cores",
        "wrk+world cores",
        "cores in all",
        "capacity req/s",
        "vs one process",
        "errors",
    )
    return table(headers, rows)


def target_rows(results: Sequence[SetupLevel]) -> list[list[str]]:
    """The targets-table rows of `--workers 2` against one process (one per worlds and
    connections): the capacity ratio, measured req/s beside it."""
    rows: list[list[str]] = []
    for result in results:
        base = _one_process(results, result)
        if result.setup.workers == 1 or base is None:
            continue
        ratio = capacity_ratio(results, result)
        worlds = f"{result.setup.worlds} world{'s' if result.setup.worlds > 1 else ''}"
        measured = (
            f"{ratio:.2f}x ({worlds}, {result.level.connections} conns; capacity"
            f" {result.capacity().median:,.0f} vs {base.capacity().median:,.0f} req/s;"
            f" measured {result.level.spread('rps').median:,.0f} vs"
            f" {base.level.spread('rps').median:,.0f} with wrk and the world on the same cores)"
        )
        ok = None if math.isnan(ratio) else ratio >= TARGET_RATIO
        rows.append([f"--workers 2 >= {TARGET_RATIO}x one worker", measured, _verdict(ok)])
    return rows


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")
