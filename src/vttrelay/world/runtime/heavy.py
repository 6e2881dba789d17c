"""Where the world's heavy work runs (drawing a scene picture or a sheet): a worker process of
lower CPU priority, off the world's loop and out of the interpreter the relay runs in.

Why a process and not a thread (bench/RESULTS.md, "Issue 21 item 2, the last step"): Pillow
holds the interpreter's lock in spans of several milliseconds while it draws a large picture
(allocating and filling it, the end of the PNG encoder, freeing it: `python -m bench.gil_spans`).
On a thread of the relay's process every such span delays the relay's loop too: `/api/health`
p99 while two clients drew 4096 x 4096 pictures was 3.3x its idle p99 with a thread, 1.2x with
this process (`python -m bench.world_stall`, medians of five runs).

The worker (`heavy_worker`, `python -m vttrelay.world.runtime.heavy_worker`) is started on first
use (about 90 ms, once per world) and kept. It runs at a lower priority (`NICENESS`), so on a
busy machine the relay's answers and the world's light requests come first, and one job at a
time: heavy requests queue for it instead of taking every core. It ignores SIGINT (Ctrl-C of
`vttrelay serve` reaches the whole process group: `close` stops it) and ends when its stdin
does, so a parent that dies, even by SIGKILL, leaves no worker behind. Why not
`multiprocessing`: its spawned children run the parent's main script again (`__mp_main__`),
which a program that embeds the world without an `if __name__ == "__main__"` guard would not
survive; this worker imports only what its jobs name.

Jobs cross the worker's stdin and stdout as length-prefixed pickles (`send`, `receive`): `fn` is
a module-level function, its arguments documents, paths and numbers, its result a picture, or
the exception it raised. `fn` is called with a keyword `checkpoint`, which raises `OverTime` once
the caller's deadline has passed (`time.monotonic`, the same clock in every process of the
machine): a picture past its time limit stops there, and one that queued past it never starts.
A worker that dies under its work (killed, out of memory) fails that work with `WorkerLost`; the
next job starts a new one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import pickle
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from typing import IO, Any, Final, TypeVar

from vttrelay import PACKAGE_ROOT

T = TypeVar("T")

NICENESS: Final = 10
# glibc's malloc, in the worker: blocks from 128 KiB up are mapped and given back when freed. By
# default the threshold grows with the first large block freed, and a picture's 16 MiB blocks
# then stay in the heap: the worker held about 75 MiB after two 4096 x 4096 pictures, 28 MiB
# with this (bench/RESULTS.md). An operator's own setting wins.
MMAP_THRESHOLD: Final = "MALLOC_MMAP_THRESHOLD_"
MMAP_THRESHOLD_BYTES: Final = "131072"
STOP_WAIT: Final = 10.0  # seconds `close` gives the worker to end its job before killing it
_LENGTH: Final = struct.Struct("!Q")


class OverTime(Exception):
    """The work reached a `checkpoint` past its deadline and stopped."""


class WorkerLost(Exception):
    """The worker process died while it held the work (killed, out of memory)."""


class Checkpoint:
    """In the worker: raise OverTime once `deadline` (`time.monotonic`) has passed."""

    def __init__(self, deadline: float | None) -> None:
        self._deadline = deadline

    def __call__(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise OverTime


def send(stream: IO[bytes], payload: bytes) -> None:
    """One message: its length, then its bytes (a pickle)."""
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def receive_bytes(stream: IO[bytes]) -> bytes:
    """The next message's bytes; EOFError if the stream ends first."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError
    return body


def receive(stream: IO[bytes]) -> Any:
    """The next message, unpickled; EOFError if the stream ends first."""
    return pickle.loads(receive_bytes(stream))


class HeavyWork:
    """The worker process, started on first use; `close()` stops it."""

    def __init__(self, niceness: int = NICENESS) -> None:
        self._niceness = niceness
        self._worker: subprocess.Popen[bytes] | None = None
        # the one thread that talks to the worker: jobs queue for it, one at a time
        self._talker: concurrent.futures.ThreadPoolExecutor | None = None

    async def run(
        self, fn: Callable[..., T], *args: Any, seconds: float | None = None, **kwargs: Any
    ) -> T:
        """`fn(*args, **kwargs, checkpoint=...)` in the worker; its result (or its exception).
        `seconds`: the time it may take from now (its queueing included), else no limit."""
        deadline = None if seconds is None else time.monotonic() + seconds
        job = pickle.dumps((fn, args, kwargs, deadline), pickle.HIGHEST_PROTOCOL)
        if self._talker is None:
            self._talker = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="vttrelay-world-heavy"
            )
        ok, value = await asyncio.get_running_loop().run_in_executor(
            self._talker, self._exchange, job
        )
        if not ok:
            raise value
        return value

    def _start(self) -> subprocess.Popen[bytes]:
        # The worker imports the vttrelay this process runs (one put on `sys.path` by hand, too)
        found = [str(PACKAGE_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        worker = subprocess.Popen(
            [sys.executable, "-m", "vttrelay.world.runtime.heavy_worker", str(self._niceness)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={
                MMAP_THRESHOLD: MMAP_THRESHOLD_BYTES,
                **os.environ,
                "PYTHONPATH": os.pathsep.join(found),
            },
        )
        assert worker.stdin is not None
        send(worker.stdin, pickle.dumps(sys.path))  # it finds the modules its jobs name
        return worker

    def _exchange(self, job: bytes) -> tuple[bool, Any]:
        """On the talking thread: one job to the worker (started if needed), its answer."""
        worker = self._worker
        if worker is None or worker.poll() is not None:
            worker = self._worker = self._start()
        assert worker.stdin is not None and worker.stdout is not None
        try:
            send(worker.stdin, job)
            answer = receive_bytes(worker.stdout)
        except (OSError, EOFError, ValueError):
            self._worker = None
            _end(worker, 0)
            raise WorkerLost from None
        try:
            ok, value = pickle.loads(answer)
        except Exception as exc:  # an exception class that cannot be rebuilt here
            return False, RuntimeError(f"the heavy work's answer could not be read: {exc!r}")
        return bool(ok), value

    def close(self) -> None:
        """Cancel the queued jobs, let the worker end the one it has (`STOP_WAIT` at most, then
        it is killed), and end the talking thread."""
        if self._talker is not None:
            self._talker.shutdown(wait=False, cancel_futures=True)
        if self._worker is not None:
            _end(self._worker, STOP_WAIT)
            self._worker = None
        if self._talker is not None:
            self._talker.shutdown(wait=True)
            self._talker = None


def _end(worker: subprocess.Popen[bytes], wait: float) -> None:
    """Close the worker's stdin (it ends after its job), wait up to `wait` s, then kill it."""
    with contextlib.suppress(OSError):
        if worker.stdin is not None:
            worker.stdin.close()
    try:
        worker.wait(wait)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
    if worker.stdout is not None:
        worker.stdout.close()
