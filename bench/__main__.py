"""`python -m bench`: run the relay benchmarks of issue 6 and print one table per scenario.

Scenarios (`--scenario`, repeatable; all by default):
  forwarded  the forwarded mix (get-actor-details, skill-check, GET/POST /chat, /players, /roll,
             /get, /search) with small replies, at 20, 200 and 1,000 connections
  forwarded-22k  the same at 20 with the recorded 22 KB get-actor-details reply
  floor      the same load against GET /api/health (no world hop)
  streams    SSE fan-out to 1,000 subscribers; RSS per idle subscriber and /api/health while
             10,000 are held
  worlds     the forwarded mix spread over 500 connected worlds
  rss        RSS after each of five repeated forwarded runs (flat within 10 %?)
  forwarded-recorded  (not by default) the mix with every reply as recorded (/get's: 52 KB)
  hop        (not by default) the mix at 1 and 20 connections: one process; two instances over
             Redis with the load on the world's instance; the same with the load on the other
  workers    (not by default) the mix against one process and `--workers 2`, unpinned, with
             the cores the relay side and the load side used

Everything listens on 127.0.0.1, every process is stopped by its pid, every load run is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench import procs, scale, scenarios, streams_bench
from bench.harness import LOAD_CPU
from bench.procs import pin_self
from bench.stats import mib, table
from bench.wrkload import require_wrk

SCENARIOS = ("forwarded", "forwarded-22k", "floor", "streams", "worlds", "rss")
# only when asked for: hop and workers need redis-server
EXTRA_SCENARIOS = ("forwarded-recorded", "hop", "workers")
WRK_SCENARIOS = (*scenarios.LOAD_SCENARIOS, "rss", "hop", "workers")
# Issue 15: relay CPU per forwarded request against the floor's, at 20 connections
COST_LEVEL = 20
COST_TARGETS = {"forwarded": 1.25, "forwarded-22k": 1.4}
FD_LIMIT = 65_536


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--pin", action="store_true", help="relay on core 0, everything else on core 1"
    )
    parser.add_argument("--runs", type=int, default=3, help="measured runs per level (3)")
    parser.add_argument("--duration", type=float, help="seconds per wrk run (10; 2 with --quick)")
    parser.add_argument(
        "--scenario",
        action="append",
        choices=(*SCENARIOS, *EXTRA_SCENARIOS),
        help="run only this (repeatable)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="short runs and fewer idle subscribers (< 2 min)"
    )
    parser.add_argument(
        "--conns",
        type=int,
        action="append",
        help="only this connection level of each load scenario (repeatable; default: all)",
    )
    parser.add_argument(
        "--cpu",
        choices=tuple(procs.CPU_PARTS),
        default="all",
        help="the relay CPU time counted: all (user + system, the default), user or system",
    )
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    parser.add_argument(
        "--relay-log-level",
        default="INFO",
        help="the relay's log level (INFO, as `vttrelay serve`: one line per request)",
    )
    parser.add_argument(
        "--relay-backlog", type=int, help="the relay's listen backlog (default: serve()'s, 4096)"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.duration is None:
        args.duration = 2.0 if args.quick else 10.0
    if args.duration < 1:
        parser.error("--duration must be at least 1 second")
    if args.pin and (os.cpu_count() or 1) < 2:
        parser.error("--pin needs at least two cores")
    return args


def relay_args(args: argparse.Namespace) -> tuple[str, ...]:
    """Arguments for bench.relay_server from ours."""
    extra = ("--backlog", str(args.relay_backlog)) if args.relay_backlog else ()
    return ("--log-level", args.relay_log_level, *extra)


def raise_fd_limit(want: int = FD_LIMIT) -> int:
    """Raise the open-files limit (inherited by children) as far as allowed; returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def cost(results: dict[str, Any], scenario: str) -> float | None:
    """Relay CPU per request of `scenario` over the floor's, at COST_LEVEL connections, in the
    same run (medians of its runs); None unless both were measured."""
    mine = {lv.connections: lv for lv in results.get(scenario, [])}.get(COST_LEVEL)
    floor = {lv.connections: lv for lv in results.get("floor", [])}.get(COST_LEVEL)
    if mine is None or floor is None:
        return None
    return float(mine.spread("cpu_per_1k").median / floor.spread("cpu_per_1k").median)


def cost_lines(results: dict[str, Any]) -> list[str]:
    """The closing lines: `forwarded cost: X.XX× the floor` (issue 15), and the same with the
    22 KB reply."""
    lines = []
    for scenario, label in (("forwarded", ""), ("forwarded-22k", " with the 22 KB reply")):
        ratio = cost(results, scenario)
        if ratio is not None:
            lines.append(f"forwarded cost{label}: {ratio:.2f}× the floor")
    return lines


def targets(results: dict[str, Any]) -> list[list[str]]:
    """The targets (issue 15's where it sets one) and whether this run met them."""
    rows: list[list[str]] = []
    for scenario, limit in COST_TARGETS.items():
        ratio = cost(results, scenario)
        if ratio is not None:
            rows.append(
                [
                    f"{scenario} relay CPU <= {limit}x the floor's at {COST_LEVEL}",
                    f"{ratio:.2f}x",
                    verdict(ratio <= limit),
                ]
            )
    forwarded = {lv.connections: lv for lv in results.get("forwarded", [])}
    if 20 in forwarded:
        p99 = forwarded[20].spread("p99_ms").median
        rows.append(["forwarded p99 <= 5 ms at 20", f"{p99:.2f} ms", verdict(p99 <= 5)])
    for level in (200, 1000):
        if level in forwarded:
            lv = forwarded[level]
            bad = sum(r.load.non_2xx + r.load.socket_errors for r in lv.runs)
            late = sum(r.load.timeouts for r in lv.runs)
            rows.append([f"no error at {level:,}", str(bad), verdict(bad == 0)])
            rows.append([f"no timeout at {level:,}", str(late), verdict(late == 0)])
    if "rss" in results:
        drift = results["rss"].drift
        rows.append(
            ["RSS flat (+-10 %) over 5 runs", f"{drift * 100:.1f} %", verdict(drift <= 0.1)]
        )
    if "streams" in results:
        st = results["streams"]
        if st.fanout is not None:
            p99 = st.fanout.p99_ms
            ok = None if math.isnan(p99) else p99 <= 25
            measured = f"{p99:.1f} ms (in the sockets: {st.fanout.kernel_p99_ms:.1f})"
            rows.append(["fan-out p99 <= 25 ms at 1,000", measured, verdict(ok)])
        if st.idle is not None:
            held = f"{st.idle.runs[0].subscribers:,} idle SSE"
            total = mib(st.idle.rss_total)
            ok = total <= 200
            rows.append([f"RSS <= 200 MiB in all, {held}", f"{total:.1f} MiB", verdict(ok)])
            p99 = st.idle.health_p99_ms
            rows.append([f"health p99 <= 10 ms, {held} held", f"{p99:.2f} ms", verdict(p99 <= 10)])
    rows.extend(scale.target_rows(results.get("workers", [])))
    return rows


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for prop in (
            "rps",
            "cpu_per_1k",
            "drift",
            "per_subscriber_kib",
            "p50_ms",
            "p99_ms",
            "rss_total",
            "health_p99_ms",
        ):
            if hasattr(type(value), prop) and isinstance(getattr(type(value), prop), property):
                out[prop] = getattr(value, prop)
        return out
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


async def run(args: argparse.Namespace) -> int:
    chosen = [s for s in (*SCENARIOS, *EXTRA_SCENARIOS) if s in (args.scenario or SCENARIOS)]
    if any(s in WRK_SCENARIOS for s in chosen):
        require_wrk()
    fds = raise_fd_limit()
    if args.pin:
        pin_self(LOAD_CPU)
    procs.cpu_part = args.cpu
    print(f"# vttrelay bench: {machine()}")
    print(
        f"# scenarios {', '.join(chosen)}; runs {args.runs}; {args.duration:g} s per wrk run;"
        f" pin {'relay on core 0, rest on core 1' if args.pin else 'off'};"
        f" relay log level {args.relay_log_level};"
        f" listen backlog {args.relay_backlog or 'default'}; open-files limit {fds}"
        + ("" if args.cpu == "all" else f"; relay CPU counted: {args.cpu} time only")
    )
    print("# cells: median (min-max) over the runs; error columns: totals over the runs\n")
    started = time.monotonic()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="vttrelay-bench-") as tmp:
        opts = scenarios.Options(
            workdir=Path(tmp),
            runs=args.runs,
            duration=args.duration,
            pin=args.pin,
            relay_args=relay_args(args),
            conns=tuple(args.conns or ()),
        )
        for name in chosen:
            t0 = time.monotonic()
            if name in scenarios.LOAD_SCENARIOS:
                levels = await scenarios.load_scenario(opts, name)
                results[name] = levels
                print(f"## {name}\n\n{scenarios.load_table(levels)}\n")
            elif name == "rss":
                flat = await scenarios.rss_flat(opts)
                results[name] = flat
                title = f"## rss (forwarded at {flat.connections} conns, one relay)"
                print(f"{title}\n\n{scenarios.rss_table(flat)}\n")
            elif name == "hop":
                hops = await scale.hop(opts)
                results[name] = hops
                print(f"## hop\n\n{scale.hop_table(hops)}\n")
            elif name == "workers":
                split = await scale.workers(opts)
                results[name] = split
                print(f"## workers (unpinned)\n\n{scale.workers_table(split)}\n")
            elif name == "streams":
                st = await streams_bench.run(opts, quick=args.quick)
                results[name] = st
                print(f"## streams\n\n{streams_bench.render(st)}\n")
            print(f"({name}: {time.monotonic() - t0:.0f} s)\n", flush=True)
    rows = targets(results)
    if rows:
        print("## targets\n\n" + table(("target", "measured", "verdict"), rows) + "\n")
    for line in cost_lines(results):
        print(line)
    print(f"# total {time.monotonic() - started:.0f} s")
    if args.json:
        payload = {"machine": machine(), "args": vars(args), "results": results}
        args.json.write_bytes(orjson.dumps(to_jsonable(payload), option=orjson.OPT_INDENT_2))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
