"""How many instructions the relay process alone spends per request, counted by callgrind.

Run: `python -m bench.instructions [--mix forwarded|floor] [--requests 1000] [--warmup 200]`.

Wall-clock CPU time on a 2-core machine moves by 10-20 % between runs; an instruction count
does not. This starts the bench's Stack (a provisioned relay process and the fake world, as
`python -m bench` does) with the relay under `valgrind --tool=callgrind`, sends `--warmup`
requests, then, in a second Stack, `--warmup + --requests`, one at a time; the difference of
the two totals over `--requests` is the relay's instructions per request, start-up and
shutdown cancelled out. `forwarded` is the issue-6 mix of five actions (the first five of
`mixes.FORWARDED`, served by every tree since then, with the fake world's recorded replies);
`floor` is `GET /api/health`. `--activity-days 0` runs the relay without its activity log
(the before of issue 26's measurement). Needs `valgrind` (Debian: valgrind); takes a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

import aiohttp

from bench import harness, mixes

COMMON_ACTIONS = 5  # as in bench.hotpath: the issue-6 mix
FLOOR = [("GET", "/api/health", None)]


async def relay_instructions(
    mix: str, requests: int, workdir: Path, relay_args: tuple[str, ...] = ()
) -> int:
    """Instructions of a relay process that served `requests` requests of `mix`, start to stop."""
    out = workdir / "callgrind.out"
    wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}")
    saved, harness.START_TIMEOUT = harness.START_TIMEOUT, 300.0  # callgrind: ~50 times slower
    try:
        await _serve(mix, requests, workdir, wrapper, relay_args)
    finally:
        harness.START_TIMEOUT = saved
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary line in {out}")


async def _serve(
    mix: str, requests: int, workdir: Path, wrapper: tuple[str, ...], relay_args: tuple[str, ...]
) -> None:
    """Start the Stack with the relay under `wrapper`, send the requests one at a time, stop."""
    async with harness.Stack(
        workdir=workdir, relay_wrapper=wrapper, relay_args=relay_args
    ) as stack:
        batch = (
            mixes.for_world(mixes.FORWARDED[:COMMON_ACTIONS], stack.client_ids[0])
            if mix == "forwarded"
            else FLOOR
        )
        headers = {"x-api-key": stack.api_key}
        async with aiohttp.ClientSession() as session:
            for i in range(requests):
                method, path, body = batch[i % len(batch)]
                async with session.request(
                    method, stack.url + path, json=body, headers=headers
                ) as resp:
                    await resp.read()
                    if resp.status != 200:
                        raise RuntimeError(f"{method} {path}: {resp.status} {await resp.text()}")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("--mix", choices=("forwarded", "floor"), default="forwarded")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument(
        "--activity-days",
        type=float,
        help="the relay's --activity-days (default: the product's; 0: no activity log)",
    )
    parser.add_argument(
        "--activity-flush",
        type=float,
        help="seconds between the activity log's writes (default 1; see bench/RESULTS.md: under "
        "callgrind a second holds ~50 times fewer requests than on a real core)",
    )
    args = parser.parse_args(argv)
    relay_args: tuple[str, ...] = ()
    if args.activity_days is not None:
        relay_args += ("--activity-days", str(args.activity_days))
    if args.activity_flush is not None:
        relay_args += ("--activity-flush", str(args.activity_flush))
    if shutil.which("valgrind") is None:
        print("bench.instructions needs valgrind (Debian: valgrind)", file=sys.stderr)
        return 2
    totals = []
    for count in (args.warmup, args.warmup + args.requests):
        with tempfile.TemporaryDirectory(prefix="vttrelay-instructions-") as tmp:
            print(f"# the relay under callgrind, {count} requests of {args.mix} ...", flush=True)
            totals.append(await relay_instructions(args.mix, count, Path(tmp), relay_args))
    per_request = (totals[1] - totals[0]) / args.requests
    print(f"{args.mix}: {per_request:,.0f} relay instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
