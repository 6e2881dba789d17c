"""The execute-js sandbox: run an untrusted script in an embedded JavaScript engine, in a child
process of its own, with a time limit, a memory limit and no access to anything but the data
and calls the world hands it.

Engine: `quickjs` (PyPI `quickjs`, QuickJS in a C extension). Both candidates were measured on
this project's 2-core machine:

* `mini-racer` 0.14.1 (V8): creating an isolate took 77 ms the first time and 2.2 ms after. Its
  time limit (cancel the eval task) stopped `while(true){}` after 0.50 s, but NOT code that runs
  after an `await`: V8 runs microtasks after the eval task has reported its result, so
  `await null; while(true){}` was never stopped, and after a call into Python the busy
  continuation ran inside the (synchronous, uncancelable) promise-resolve call and froze the
  calling asyncio loop for good. Its memory limit likewise did not fire after an `await` (a
  growing array ran 5 s without an out-of-memory). Python functions can only be exposed as
  Promise-returning callbacks (0.76 ms per call, 200 calls in 153 ms), and a Python exception
  in one reached the script with its full Python traceback (host paths) in the message.
* `quickjs` 1.19.4: a context costs 0.16 ms. The interrupt-based time limit stopped a busy loop
  after 0.50 s, also inside a pending job (after `await`); the memory limit stopped a growing
  array after 0.10 s with `out of memory`; deep recursion ends in a `stack overflow` error; the
  runtime has no `std`/`os` modules and `import()` fails with "could not load module". But: it
  refuses calls into Python while a time limit is set, a context must stay on one thread, and
  one out-of-memory path crashes the extension (`let a=[]; while(true) a.push(new
  Array(1000).fill(1))` under a 16 MiB limit is a deterministic segmentation fault).

So quickjs, and each script runs in a fresh child process
(`python -m vttrelay.world.scripts.child`, 0.1-0.3 s to start, not counted as script time):
an engine crash, a runaway allocation or a wedged engine costs only that child, never the
world's process. The child gets a minimal
environment and OS backstops (address space = memory limit + 512 MiB, CPU seconds = time limit
+ 3, no core files, no file writes), and the parent kills it 2 s after its time limit in any
case.

The script never calls into Python: the world API (`js/prelude.js`) queues host calls (writes,
uuid lookups) that return Promises; between turns of the JavaScript job queue the child sends
the queue to the parent as one JSON line, the parent runs each call through `host` on its event
loop (so every store transaction runs there, one per call, with a yield to other requests in
between; at most 1000 calls and 8 MiB of call data per script) and answers with one JSON
line. Reads are synchronous in the script: they come from a snapshot (`init`) taken before the
run and refreshed by each write's answer. Only JSON crosses the process boundary and only JSON
strings cross into the engine.

Limits inside the child: every piece of JavaScript runs with the engine's interrupt deadline set
to the time left of the script's wall-clock budget (default 5 s), also checked between pieces
and while timers are waited for; memory is capped per runtime (default 64 MiB); the JavaScript
stack at 4 MiB (at most half the child's C stack). A script over a limit ends with
`ScriptError("the script exceeded its time limit of 5 s")` / `("out of memory (the script's
memory limit is 64 MiB)")`. Up to 4 scripts run at the same time; more wait their turn.

A run may also have a `deadline` (event-loop time) by which it must be over, whoever's fault the
delay is: waiting for a free slot, starting the child, or the script itself. The caller uses it
to never let a script outlive the relay's wait for its reply (a caller that already got 408 has
nobody to answer): the wait for a slot ends there, and the script's time limit is cut so that it
ends, and its child is killed at the latest, by the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import math
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

import orjson

from vttrelay import PACKAGE_ROOT
from vttrelay.world.errors import HostError, ScriptError

DEFAULT_TIME_LIMIT: Final = 5.0  # seconds per script
DEFAULT_MEMORY_LIMIT: Final = 64 * 1024 * 1024  # bytes per script
DEFAULT_STACK_LIMIT: Final = 4 * 1024 * 1024  # bytes of JavaScript stack (~5000 calls deep)
DEFAULT_WORKERS: Final = 4  # scripts running at the same time
MAX_HOST_CALLS: Final = 1_000  # world calls per script
MAX_CALL_BYTES: Final = 8 * 1024 * 1024  # JSON bytes of all a script's world calls together
KILL_GRACE: Final = 2.0  # seconds after the time limit before the parent kills the child
MIN_TIME_LIMIT: Final = 0.05  # a run cut shorter than this by its deadline is not started
STARTUP_TIMEOUT: Final = 10.0  # seconds for a child to start (not part of the time limit)
ADDRESS_SPACE_MARGIN: Final = 512 * 1024 * 1024  # the child's RLIMIT_AS above the memory limit


# `host(op, args)` runs on the event loop thread; returns JSON data or raises HostError.
HostCall = Callable[[str, dict[str, Any]], Any]


@dataclass(frozen=True)
class ScriptLimits:
    time_limit: float = DEFAULT_TIME_LIMIT
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    stack_limit: int = DEFAULT_STACK_LIMIT
    max_host_calls: int = MAX_HOST_CALLS
    max_call_bytes: int = MAX_CALL_BYTES

    def time_message(self) -> str:
        return f"the script exceeded its time limit of {self.time_limit:g} s"

    def call_bytes_message(self) -> str:
        mib = self.max_call_bytes / (1024 * 1024)
        return f"the script sent more than {mib:g} MiB of data in its world calls"

    def memory_message(self) -> str:
        mib = self.memory_limit / (1024 * 1024)
        return f"out of memory (the script's memory limit is {mib:g} MiB)"


@dataclass(frozen=True)
class ScriptResult:
    """A finished script: `defined` is False when it returned `undefined` (no `result`)."""

    defined: bool
    value: Any = None


UNDEFINED: Final = ScriptResult(False)


def engine_available() -> bool:
    """True if the engine is installed (the parent never imports it; only the child does)."""
    return importlib.util.find_spec("quickjs") is not None


# The parent: the world's side ---------------------------------------------------------------------


def _reply(call: Any, host: HostCall) -> dict[str, Any]:
    """Run one world call on the event loop; every failure becomes a rejection."""
    call_id = call.get("id") if isinstance(call, dict) else None
    op = call.get("op") if isinstance(call, dict) else None
    args = call.get("args") if isinstance(call, dict) else None
    if not isinstance(op, str) or not isinstance(args, dict):
        return {"id": call_id, "error": "invalid world call"}
    try:
        value = host(op, args)
        return {"id": call_id, "value": orjson.loads(orjson.dumps(value))}
    except HostError as exc:
        return {"id": call_id, "error": exc.message}
    except Exception as exc:  # a bug in a host call: say so without leaking internals
        return {"id": call_id, "error": f"world call {op} failed: {type(exc).__name__}"}


def _child_env() -> dict[str, str]:
    """A minimal environment (none of the parent's variables, so no secrets in the child) in
    which the child finds this very package, whatever the parent's sys.path tricks."""
    return {
        "PYTHONPATH": str(PACKAGE_ROOT),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LC_ALL": "C.UTF-8",
    }


def _left(loop: asyncio.AbstractEventLoop, end: float) -> float | None:
    """Seconds from now until `end` (at least 0), or None for no end."""
    return None if end == math.inf else max(0.0, end - loop.time())


async def _acquire(slots: asyncio.Semaphore, timeout: float | None) -> bool:
    """Take a slot within `timeout` seconds; False (and no slot held) if none came free."""
    waiter = asyncio.ensure_future(slots.acquire())
    await asyncio.wait({waiter}, timeout=timeout)
    if waiter.done():
        return True
    waiter.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiter
    if not waiter.cancelled():  # it got the slot while being cancelled: give it back
        slots.release()
    return False


class ScriptRunner:
    """Runs each script in a fresh child process; at most `workers` at the same time."""

    def __init__(
        self, limits: ScriptLimits | None = None, *, workers: int = DEFAULT_WORKERS
    ) -> None:
        self.limits = limits or ScriptLimits()
        self.workers = workers
        self._slots: asyncio.Semaphore | None = None
        self._children: set[asyncio.subprocess.Process] = set()

    def close(self) -> None:
        """Kill every child that is still running (by its process id)."""
        for proc in list(self._children):
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()

    async def run(
        self,
        script: str,
        *,
        init: dict[str, Any],
        host: HostCall,
        limits: ScriptLimits | None = None,
        deadline: float | None = None,
    ) -> ScriptResult:
        """Run `script` as the body of an async function; its return value is the result.

        `init` is the JSON snapshot the prelude builds `game` from; `host(op, args)` answers
        the script's world calls on this event loop. `deadline` (loop time): the run is over by
        then, its child killed (see the module docstring). Raises ScriptError.
        """
        if not engine_available():
            raise ScriptError("the JavaScript engine is not installed (pip install quickjs)")
        limits = limits or self.limits
        loop = asyncio.get_running_loop()
        end = math.inf if deadline is None else deadline
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        if not await _acquire(self._slots, _left(loop, end)):
            raise ScriptError(
                "the script could not start in time: the world runs at most "
                f"{self.workers} scripts at once"
            )
        try:
            return await self._run_child(script, init, host, limits, end)
        finally:
            self._slots.release()

    async def _run_child(
        self,
        script: str,
        init: dict[str, Any],
        host: HostCall,
        limits: ScriptLimits,
        end: float = math.inf,
    ) -> ScriptResult:
        loop = asyncio.get_running_loop()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # no current directory on sys.path
            "-m",
            "vttrelay.world.scripts.child",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=_child_env(),
            limit=2 * limits.memory_limit + 1024 * 1024,
        )
        self._children.add(proc)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            try:
                left = _left(loop, end)
                startup = STARTUP_TIMEOUT if left is None else min(STARTUP_TIMEOUT, left)
                async with asyncio.timeout(startup):
                    ready = await proc.stdout.readline()
            except TimeoutError:
                raise ScriptError("the script engine did not start in time") from None
            if not ready:
                code = await proc.wait()
                raise ScriptError(f"the script engine did not start (exit status {code})")
            # Cut the time limit so that the child is done, or killed, by `end`.
            budget = end - loop.time() - KILL_GRACE
            if budget < limits.time_limit:
                if budget < MIN_TIME_LIMIT:
                    raise ScriptError("the script could not start in time")
                limits = replace(limits, time_limit=round(budget, 2))
            deadline = loop.time() + limits.time_limit + KILL_GRACE
            job = {"script": script, "init": init, "limits": asdict(limits)}
            proc.stdin.write(orjson.dumps(job) + b"\n")
            await proc.stdin.drain()
            sent = 0  # bytes of world calls so far
            while True:
                async with asyncio.timeout_at(deadline):
                    line = await proc.stdout.readline()
                if not line:
                    code = await proc.wait()
                    raise ScriptError(
                        f"the script engine stopped unexpectedly (exit status {code}); "
                        "the world is unaffected"
                    )
                message = orjson.loads(line)
                if "calls" in message:
                    sent += len(line)
                    if sent > limits.max_call_bytes:  # none of this batch runs
                        raise ScriptError(limits.call_bytes_message())
                    calls = message["calls"] if isinstance(message["calls"], list) else []
                    replies = []
                    for call in calls:  # one transaction each, letting other requests in between
                        if loop.time() > deadline:
                            raise TimeoutError
                        replies.append(_reply(call, host))
                        await asyncio.sleep(0)
                    proc.stdin.write(orjson.dumps({"replies": replies}) + b"\n")
                    await proc.stdin.drain()
                elif "error" in message:
                    raise ScriptError(str(message["error"]))
                else:
                    result = message.get("result") or {}
                    if not result.get("defined"):
                        return UNDEFINED
                    return ScriptResult(True, result.get("value"))
        except TimeoutError:
            raise ScriptError(limits.time_message()) from None
        except (BrokenPipeError, ConnectionResetError):
            code = await proc.wait()
            raise ScriptError(
                f"the script engine stopped unexpectedly (exit status {code}); "
                "the world is unaffected"
            ) from None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                with contextlib.suppress(Exception):
                    await asyncio.shield(proc.wait())
            self._children.discard(proc)
