"""The scale-out scenarios of issue 12: one hop between instances, and `--workers 2`.

- `hop`: the forwarded mix against three set-ups, each on a fresh stack: one relay process
  without Redis (the default), two relay processes over one Redis with the load sent to the one
  that holds the world (`same instance`), and the same two with the load sent to the other one,
  so every call takes the hop through Redis to the world's instance and back (`cross instance`).
  At 1 connection the latency difference is the hop itself; at 20 the CPU column says what the
  hop costs the relay side (both relays and Redis). With `--pin`, the relay side shares core 0
  and wrk and the fake world core 1, as in the other scenarios.
- `workers`: the forwarded mix against one relay process and against `--workers 2` (over Redis),
  never pinned: the workers are there to use both cores, and so wrk and the fake world share
  those cores with them. The table shows, per set-up, the cores the relay side used (its CPU
  seconds per second of load, workers and Redis included) and the cores wrk and the fake world
  used: on this 2-core machine the sum is what the machine had, and the load side's share is
  CPU the relay could not have.

Cells are median (min-max) over the runs; the added latency is the median of the cross-instance
runs minus the median of the same-instance runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench import mixes
from bench.harness import Stack
from bench.scenarios import WARMUP_SECONDS, Level, Options, measured_run, requests_for
from bench.stats import Spread, fmt_number, fmt_spread, table

HOP_LEVELS = (1, 20)


@dataclass(frozen=True)
class Setup:
    """One way to run the relay: how many instances and workers, where the load goes."""

    name: str
    instances: int = 1
    workers: int = 1
    target: int = 0
    pin: bool = True  # honour --pin (the workers set-up never pins)


HOP_SETUPS = (
    Setup("one process, no Redis"),
    Setup("2 instances, same instance", instances=2, target=0),
    Setup("2 instances, cross instance", instances=2, target=1),
)
WORKER_SETUPS = (
    Setup("one process", pin=False),
    Setup("--workers 2 (Redis)", workers=2, pin=False),
)


@dataclass(frozen=True)
class SetupLevel:
    """The runs of one set-up at one concurrency."""

    setup: Setup
    level: Level


async def run_setup(opts: Options, setup: Setup, connections: int) -> SetupLevel:
    """A fresh stack for the set-up, a warm-up, then `opts.runs` measured runs."""
    slug = setup.name.replace(" ", "-").replace(",", "").replace("(", "").replace(")", "")
    workdir = opts.workdir / f"{slug}-{connections}"
    stack = Stack(
        workdir,
        worlds=1,
        pin=opts.pin and setup.pin,
        relay_args=opts.relay_args,
        instances=setup.instances,
        workers=setup.workers,
        target=setup.target,
    )
    async with stack:
        requests_file = mixes.write(
            workdir / "requests.txt", requests_for("forwarded", stack.client_ids)
        )
        await measured_run(stack, requests_file, connections, WARMUP_SECONDS)
        runs = [
            await measured_run(stack, requests_file, connections, opts.duration)
            for _ in range(opts.runs)
        ]
    return SetupLevel(setup, Level(setup.name, connections, tuple(runs)))


async def hop(opts: Options) -> list[SetupLevel]:
    return [await run_setup(opts, s, c) for c in HOP_LEVELS for s in HOP_SETUPS]


async def workers(opts: Options) -> list[SetupLevel]:
    return [await run_setup(opts, s, c) for c in opts.levels for s in WORKER_SETUPS]


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


def workers_table(results: Sequence[SetupLevel]) -> str:
    rows: list[list[str]] = []
    for result in results:
        lv = result.level
        relay = _relay_cores(lv)
        load = Spread.of([r.load_side_cores for r in lv.runs])
        rows.append(
            [
                result.setup.name,
                str(lv.connections),
                fmt_spread(lv.spread("rps"), 0),
                fmt_spread(lv.spread("p50_ms"), 2),
                fmt_spread(lv.spread("p99_ms"), 2),
                fmt_spread(lv.spread("cpu_per_1k"), 3),
                fmt_spread(relay, 2),
                fmt_spread(load, 2),
                fmt_number(relay.median + load.median, 2),
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
        "relay side cores",
        "wrk+world cores",
        "cores in all",
        "errors",
    )
    return table(headers, rows)
