"""Work for the heavy-work process's tests (`world.runtime.heavy`): module-level functions, so
that the worker (a fresh interpreter) can import them; each takes the `checkpoint` keyword the
worker passes. A file is the gate between the test and the worker: no shared memory needed.
`alive(pid)` is for the tests themselves: is that process (a worker) still there?"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def who(*, checkpoint: Callable[[], None]) -> tuple[int, int]:
    """The worker's process id and niceness."""
    return os.getpid(), os.getpriority(os.PRIO_PROCESS, 0)


def add(a: int, b: int, *, checkpoint: Callable[[], None]) -> int:
    return a + b


def divide(a: int, b: int, *, checkpoint: Callable[[], None]) -> float:
    return a / b


def wait_for(gate: Path, log: Path, name: str, *, checkpoint: Callable[[], None]) -> str:
    """Wait (at most 30 s) until the file `gate` exists, then append `name` to `log`."""
    deadline = time.monotonic() + 30
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    with log.open("a") as out:
        out.write(name + "\n")
    return name


def package_file(*, checkpoint: Callable[[], None]) -> str:
    """Where the worker's `vttrelay` package was imported from."""
    import vttrelay

    return str(vttrelay.__file__)


def noisy(text: str, *, checkpoint: Callable[[], None]) -> str:
    """Print `text` (to the worker's stdout, which a job must not be able to break)."""
    print(text, flush=True)
    return text


def spin(seconds: float, *, checkpoint: Callable[[], None]) -> int:
    """Loop for `seconds`, calling `checkpoint` every millisecond; how many times it did."""
    calls, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        checkpoint()
        calls += 1
        time.sleep(0.001)
    return calls


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (one that ended is not, reaped or not: an orphan's
    zombie may wait for a reaper that a container does not have)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
