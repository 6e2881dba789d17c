"""Profile the relay under load with py-spy: where does a forwarded request spend its CPU?

Run: `python -m bench.profile [--scenario forwarded|forwarded-22k|floor|worlds|subscribe]
[--seconds 8] [--connections 20] [--pin] [--log-level INFO] [--top 25] [--raw out.txt]
[--workers N]`.

It starts the same relay and fake world as `python -m bench`, warms up for a second, then records
the relay with `py-spy record --format raw` while wrk runs the scenario's mix (or, for
`subscribe`, while 10,000 SSE streams connect), and prints the functions with the most samples:
self (the line itself) and inclusive (anywhere on the stack). With `--workers N` the relay runs as
`vttrelay serve --workers N` over its own Redis (never pinned) and every worker is recorded at
once: one pair of tables per worker, after the CPU each process of the relay side (supervisor,
workers, Redis) spent per request during the profile. Needs py-spy
(`pip install py-spy`; attaching needs ptrace rights, e.g. root in a container).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import sys
import tempfile
from pathlib import Path

from bench import mixes, scenarios, streams_bench
from bench.harness import LOAD_CPU, Stack
from bench.procs import Child, cpu_seconds, pin_argv, pin_self
from bench.scale import worker_pids
from bench.stats import table
from bench.wrkload import require_wrk, run_wrk

INSTALL_HINT = "py-spy is not installed: `.venv/bin/pip install py-spy`"
SAMPLE_RATE = 250


def aggregate(raw: str, top: int) -> tuple[str, str, int]:
    """Self and inclusive tables from py-spy's raw (collapsed stack) output."""
    self_count: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        self_count[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n

    def render(counter: collections.Counter[str], title: str) -> str:
        rows = [[f"{n * 100 / max(total, 1):.1f} %", f] for f, n in counter.most_common(top)]
        return table(("samples", title), rows)

    return render(self_count, "self: function (file:line)"), render(inclusive, "inclusive"), total


async def record(
    relay: Child | int, seconds: float, out: Path, cpu: int | None, nonblocking: bool = False
) -> asyncio.Task[int]:
    """Start py-spy on the relay (a process, or a pid); returns a task that ends with py-spy's
    exit status. `nonblocking` samples without pausing the relay (less exact stacks, no
    slowdown)."""
    pid = relay if isinstance(relay, int) else relay.pid
    beside = Path(sys.executable).with_name("py-spy")
    spy = str(beside) if beside.exists() else shutil.which("py-spy")
    if spy is None:
        raise SystemExit(INSTALL_HINT)
    argv = [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-f", "raw"]
    argv += ["-r", str(SAMPLE_RATE), "-o", str(out)] + (["--nonblocking"] if nonblocking else [])
    proc = await asyncio.create_subprocess_exec(
        *pin_argv(argv, cpu),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return asyncio.ensure_future(proc.wait())


async def run(args: argparse.Namespace) -> None:
    if args.pin:
        pin_self(LOAD_CPU)
    with tempfile.TemporaryDirectory(prefix="vttrelay-profile-") as tmp:
        workdir = Path(tmp)
        out = args.raw or workdir / "profile.txt"
        spec = scenarios.LOAD_SCENARIOS.get(args.scenario)
        worlds = spec.worlds if spec is not None else 1
        replies = spec.replies if spec is not None else "recorded"
        relay_args = ("--log-level", args.log_level)
        pin = args.pin and args.workers == 1
        async with Stack(
            workdir,
            worlds=worlds,
            pin=pin,
            relay_args=relay_args,
            replies=replies,
            workers=args.workers,
        ) as stack:
            assert stack.relay is not None
            if args.workers > 1:
                await profile_workers(stack, args, workdir)
                return
            if args.scenario == "subscribe":
                spy = await record(stack.relay, args.seconds, out, stack.load_cpu, True)
                holders = [
                    await streams_bench.hold(stack, streams_bench.PER_HOLDER, f"hold-{i}")
                    for i in range(streams_bench.IDLE_SUBSCRIBERS // streams_bench.PER_HOLDER)
                ]
                for child in holders:
                    await child.expect("HELD", streams_bench.HOLD_TIMEOUT)
                await spy
                for child in holders:
                    await child.stop()
            else:
                require_wrk()
                requests = scenarios.requests_for(args.scenario, stack.client_ids)
                requests_file = mixes.write(workdir / "requests.txt", requests)
                common = {"connections": args.connections, "cpu": stack.load_cpu}
                await run_wrk(stack.url, requests_file, stack.api_key, duration=1, **common)
                spy = await record(stack.relay, args.seconds, out, stack.load_cpu)
                load = await run_wrk(
                    stack.url, requests_file, stack.api_key, duration=args.seconds, **common
                )
                await spy
                print(
                    f"load during the profile: {load.rps:,.0f} req/s, p50 {load.p50_ms:.2f} ms,"
                    f" p99 {load.p99_ms:.2f} ms (py-spy slows the relay while it samples)\n"
                )
        self_table, inclusive_table, total = aggregate(Path(out).read_text(), args.top)
        print(f"{total} samples of the relay, {args.scenario}\n\n{self_table}\n\n{inclusive_table}")


async def profile_workers(stack: Stack, args: argparse.Namespace, workdir: Path) -> None:
    """Record every worker of a `--workers` stack at once under the scenario's wrk load."""
    assert stack.relay is not None and stack.redis is not None
    require_wrk()
    requests = scenarios.requests_for(args.scenario, stack.client_ids)
    requests_file = mixes.write(workdir / "requests.txt", requests)
    common = {"connections": args.connections, "cpu": None}
    await run_wrk(stack.url, requests_file, stack.api_key, duration=1, **common)
    workers = worker_pids(stack.relay)
    processes = {"supervisor": stack.relay.pid, "redis": stack.redis.pid}
    processes.update({f"worker {i} (pid {pid})": pid for i, pid in enumerate(workers)})
    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
    outs = [workdir / f"profile-{pid}.txt" for pid in workers]
    spies = [
        await record(pid, args.seconds, out, None) for pid, out in zip(workers, outs, strict=True)
    ]
    load = await run_wrk(stack.url, requests_file, stack.api_key, duration=args.seconds, **common)
    for spy in spies:
        await spy
    rows = [
        [name, f"{(cpu_seconds(pid) - before[name]) / max(load.requests, 1) * 1000:.3f}"]
        for name, pid in processes.items()
    ]
    print(
        f"load during the profile: {load.rps:,.0f} req/s, p50 {load.p50_ms:.2f} ms,"
        f" p99 {load.p99_ms:.2f} ms (py-spy slows the relay while it samples)\n"
    )
    print(table(("process", "CPU ms per request (during the profile)"), rows))
    for index, (pid, out) in enumerate(zip(workers, outs, strict=True)):
        self_table, inclusive_table, total = aggregate(out.read_text(), args.top)
        print(f"\n## worker {index} (pid {pid}): {total} samples, {args.scenario}\n")
        print(f"{self_table}\n\n{inclusive_table}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument(
        "--scenario", choices=(*scenarios.LOAD_SCENARIOS, "subscribe"), default="forwarded"
    )
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--pin", action="store_true")
    parser.add_argument("--log-level", default="INFO", help="the relay's, as `vttrelay` (INFO)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--raw", type=Path, help="keep py-spy's raw output here")
    parser.add_argument(
        "--workers", type=int, default=1, help="`--workers N` over Redis; every worker recorded"
    )
    asyncio.run(run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
