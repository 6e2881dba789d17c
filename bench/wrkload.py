"""Drive wrk (the load generator of the bench) and parse its summary.

wrk is a C program with an epoll loop and LuaJIT for the request mix: on one core it issues far
more HTTP/1.1 keep-alive requests per second than the relay can answer, so the relay, not the
loader, is what a run measures. `mix.lua` cycles through a request file and prints one
`WRKJSON {...}` line with the counts, errors and latency percentiles.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.procs import pin_argv

LUA_SCRIPT = Path(__file__).with_name("mix.lua")
INSTALL_HINT = (
    "wrk is not installed. On Debian or Ubuntu: `sudo apt-get update && sudo apt-get install -y "
    "wrk`; on macOS: `brew install wrk`. Then run `python -m bench` again."
)
SLACK = 30.0  # seconds a wrk run may overrun its duration before it is killed


@dataclass(frozen=True)
class LoadResult:
    """One bounded load run, from wrk or from the Python loader."""

    requests: int
    duration_s: float
    p50_ms: float
    p99_ms: float
    non_2xx: int
    timeouts: int
    socket_errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0


def wrk_path() -> str | None:
    """The wrk executable, or None."""
    return shutil.which("wrk")


def require_wrk() -> str:
    """The wrk executable; raises SystemExit with the install hint when it is missing."""
    path = wrk_path()
    if path is None:
        raise SystemExit(INSTALL_HINT)
    return path


def parse(output: str) -> LoadResult:
    """The LoadResult of mix.lua's `WRKJSON` line."""
    for line in output.splitlines():
        if line.startswith("WRKJSON "):
            data = orjson.loads(line[len("WRKJSON ") :])
            return LoadResult(
                requests=int(data["requests"]),
                duration_s=data["duration_us"] / 1e6,
                p50_ms=data["p50_us"] / 1000,
                p99_ms=data["p99_us"] / 1000,
                non_2xx=int(data["status"]),
                timeouts=int(data["timeout"]),
                socket_errors=int(data["connect"] + data["read"] + data["write"]),
            )
    raise RuntimeError(f"wrk printed no summary:\n{output[-2000:]}")


async def run_wrk(
    url: str,
    requests_file: Path,
    api_key: str,
    *,
    connections: int,
    duration: float,
    threads: int = 1,
    cpu: int | None = None,
    timeout: float = 5.0,
) -> LoadResult:
    """One wrk run of `duration` seconds; killed by pid if it overruns by SLACK seconds."""
    argv = [
        require_wrk(),
        f"-t{max(1, min(threads, connections))}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        f"--timeout={timeout:g}s",
        "-s",
        str(LUA_SCRIPT),
        url,
        "--",
        str(requests_file),
        api_key,
    ]
    proc = await asyncio.create_subprocess_exec(
        *pin_argv(argv, cpu),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), duration + SLACK)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise RuntimeError(f"wrk ran past {duration + SLACK:.0f} s and was killed") from None
    text = out.decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"wrk exited {proc.returncode}:\n{text[-2000:]}")
    return parse(text)
