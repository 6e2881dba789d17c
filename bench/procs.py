"""Child processes of the bench: start (optionally pinned to a core), read /proc, stop by pid.

Every process the bench starts goes through `start()` and is stopped with `Child.stop()`: SIGTERM
to its own pid, then SIGKILL if it is still there after a grace period. Nothing is ever stopped
by name. CPU time and RSS come from `/proc/<pid>/stat` and `/proc/<pid>/status`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CLK_TCK = os.sysconf("SC_CLK_TCK")
ROOT = Path(__file__).resolve().parents[1]  # the checkout: `python -m bench.x` works from here
LINE_LIMIT = 1024 * 1024  # fake world lines (a list of emission times) can be long


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, drawn below the kernel's ephemeral
    range when there is room: the kernel gives no such port to a `bind(("127.0.0.1", 0))` or an
    outgoing connection, so another server (a test's, on the other xdist worker) cannot take it
    while the process it is meant for starts (seconds under valgrind: `bench.instructions`)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    candidates = range(max(10_000, low - 12_000), low)
    for port in random.sample(candidates, min(len(candidates), 50)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # no room below the range
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The CPU time `cpu_seconds` counts (`python -m bench --cpu`): indexes into /proc/<pid>/stat's
# fields after the command (utime, stime). "user" and "system" show where a request's cost lies.
CPU_PARTS = {"all": (11, 12), "user": (11,), "system": (12,)}
cpu_part = "all"


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process so far: user + system (`/proc/<pid>/stat` fields 14 and 15), or
    one of them (`cpu_part`)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    return sum(int(fields[i]) for i in CPU_PARTS[cpu_part]) / CLK_TCK


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (`VmRSS` of `/proc/<pid>/status`)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def listen_overflows() -> int:
    """The kernel's count of connections dropped because a listen queue was full
    (`TcpExt: ListenOverflows` of /proc/net/netstat; for the whole network namespace)."""
    lines = Path("/proc/net/netstat").read_text().splitlines()
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=True))
            return int(table.get("ListenOverflows", 0))
    return 0


def descendants(pid: int) -> list[int]:
    """The pids of `pid`'s children, their children, ... (from the parent pids in /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(raw[raw.rindex(")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found.extend(children)
        todo.extend(children)
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its live descendants (`vttrelay serve --workers`)."""
    total = 0.0
    for each in (pid, *descendants(pid)):
        with contextlib.suppress(OSError, ValueError):
            total += cpu_seconds(each)
    return total


def tree_rss_bytes(pid: int) -> int:
    """RSS of a process and its live descendants, summed."""
    total = 0
    for each in (pid, *descendants(pid)):
        with contextlib.suppress(OSError, RuntimeError):
            total += rss_bytes(each)
    return total


def alive(pid: int) -> bool:
    """Whether `pid` still exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def pin_argv(argv: list[str], cpu: int | None) -> list[str]:
    """Prefix `argv` with `taskset -c <cpu>` when pinning is asked for."""
    if cpu is None:
        return argv
    taskset = shutil.which("taskset")
    if taskset is None:
        raise RuntimeError("--pin needs taskset (Debian package util-linux)")
    return [taskset, "-c", str(cpu), *argv]


def pin_self(cpu: int | None) -> None:
    """Pin the calling process (and so the children it starts later) to one core."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


@dataclass
class Child:
    """A started process: its name (for messages), its asyncio handle and its log file."""

    name: str
    proc: asyncio.subprocess.Process
    log_path: Path | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu_seconds(self) -> float:
        """Its CPU seconds and its descendants' (a `--workers` relay's workers)."""
        return tree_cpu_seconds(self.pid)

    def rss_bytes(self) -> int:
        """Its RSS and its descendants', summed."""
        return tree_rss_bytes(self.pid)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of its stderr/stdout log, for error messages."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    async def send(self, line: str) -> None:
        """Write one command line to its stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    async def expect(self, prefix: str, timeout: float) -> str:
        """Read stdout lines until one starts with `prefix` (or `ERROR`); returns the rest."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    raise RuntimeError(f"{self.name} exited: {self.log_tail()}")
                line = raw.decode().rstrip("\n")
                if line.startswith(prefix):
                    return line[len(prefix) :].strip()
                if line.startswith("ERROR"):
                    raise RuntimeError(f"{self.name}: {line}")

    async def stop(self, grace: float = 5.0) -> None:
        """SIGTERM by pid, wait, then SIGKILL by pid; always reaps the process."""
        if self.proc.returncode is None:
            if self.proc.stdin is not None:
                with contextlib.suppress(Exception):
                    self.proc.stdin.close()
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                await self.proc.wait()


async def start(
    name: str,
    argv: list[str],
    *,
    cpu: int | None = None,
    log_path: Path | None = None,
    pipes: bool = False,
    env: dict[str, str] | None = None,
) -> Child:
    """Start `argv` (pinned to `cpu` if given). With `pipes`, stdin/stdout are pipes for a line
    protocol and stderr goes to the log; otherwise stdout and stderr both go to the log."""
    log: IO[bytes] | int = asyncio.subprocess.DEVNULL
    if log_path is not None:
        log = open(log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        proc = await asyncio.create_subprocess_exec(
            *pin_argv(argv, cpu),
            stdin=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if pipes else log,
            stderr=log,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
            limit=LINE_LIMIT,
        )
    finally:
        if not isinstance(log, int):
            log.close()
    return Child(name, proc, log_path)


def python_argv(module: str, *args: str) -> list[str]:
    """`python -m <module> <args>` with this interpreter."""
    return [sys.executable, "-m", module, *args]
