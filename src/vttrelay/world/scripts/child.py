"""The execute-js sandbox's child process (`python -m vttrelay.world.scripts.child`): it runs
one script in the embedded engine, start to finish, under the limits the parent sends, and
answers the script's world calls by asking the parent over stdin/stdout. The parent side, the
limits and the protocol are described in `vttrelay.world.scripts.sandbox`."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from typing import Any, Final

import orjson

from vttrelay.world.errors import ScriptError
from vttrelay.world.scripts.sandbox import (
    ADDRESS_SPACE_MARGIN,
    UNDEFINED,
    ScriptLimits,
    ScriptResult,
)

PRELUDE_PACKAGE: Final = "vttrelay.world.scripts.js"
PRELUDE_RESOURCE: Final = "prelude.js"


def load_prelude() -> str:
    """The JavaScript world API, shipped as package data (`vttrelay/world/js/prelude.js`)."""
    return (
        resources.files("vttrelay.world.scripts.js").joinpath(PRELUDE_RESOURCE).read_text("utf-8")
    )


class _Timeout(Exception):
    pass


def _engine_message(exc: BaseException) -> str:
    """The first line of an engine error (`InternalError: out of memory`)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _Run:
    """Runs one script in this process. `host(calls)` answers a batch of world calls."""

    def __init__(
        self,
        prelude: str,
        init: dict[str, Any],
        script: str,
        limits: ScriptLimits,
        host: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> None:
        self.prelude = prelude
        self.init = init
        self.script = script
        self.limits = limits
        self.host = host
        self.deadline = time.monotonic() + limits.time_limit
        self.host_calls = 0

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Timeout
        return left

    def execute(self) -> ScriptResult:
        import quickjs

        ctx = quickjs.Context()
        ctx.set_memory_limit(self.limits.memory_limit)
        ctx.set_max_stack_size(self.limits.stack_limit)

        def guarded(fn: Callable[[], Any]) -> Any:
            ctx.set_time_limit(self.remaining())
            try:
                return fn()
            finally:
                ctx.set_time_limit(-1)

        def command(payload: dict[str, Any]) -> dict[str, Any]:
            text = orjson.dumps(payload).decode()
            answer = guarded(lambda: control(text))
            self.remaining()  # an interrupted piece reports its deadline here
            if not isinstance(answer, str):
                raise ScriptError("the script sandbox answered with a non-string")
            data = orjson.loads(answer)
            if not isinstance(data, dict):
                raise ScriptError("the script sandbox answered with a non-object")
            return data

        control = guarded(lambda: ctx.eval(self.prelude))
        command({"cmd": "start", "init": self.init, "source": self.script})
        while True:
            while guarded(ctx.execute_pending_job):
                self.remaining()
            self.remaining()
            status = command({"cmd": "take"})
            calls = status.get("calls") or []
            if calls:  # first, so that writes a script did not await still happen
                self.host_calls += len(calls)
                if self.host_calls > self.limits.max_host_calls:
                    raise ScriptError(
                        f"the script made more than {self.limits.max_host_calls} world calls"
                    )
                command({"cmd": "resolve", "replies": self.host(calls)})
                continue
            state = status.get("state")
            if state == "fulfilled":
                text = status.get("json")
                if not isinstance(text, str):
                    return UNDEFINED
                return ScriptResult(True, orjson.loads(text))
            if state == "rejected":
                raise ScriptError(self.explain(str(status.get("error") or "unknown error")))
            wait = status.get("nextTimer")
            if isinstance(wait, int | float):
                delay = max(0.0, float(wait) / 1000.0)
                if delay >= self.remaining():
                    raise _Timeout
                time.sleep(delay)
                command({"cmd": "fire"})
                continue
            raise ScriptError("the script awaits a Promise that can never settle")

    def outcome(self) -> dict[str, Any]:
        """Run; the answer line for the parent: `{"result": ...}` or `{"error": text}`."""
        try:
            result = self.execute()
        except ScriptError as exc:
            return {"error": exc.message}
        except _Timeout:
            return {"error": self.limits.time_message()}
        except MemoryError:  # the OS backstop (address space) hit before the engine's limit
            return {"error": self.limits.memory_message()}
        except Exception as exc:  # engine errors: out of memory, stack overflow, interrupted
            return {"error": self.explain(_engine_message(exc))}
        return {"result": {"defined": result.defined, "value": result.value}}

    def explain(self, message: str) -> str:
        """Name the limit behind the engine's terse `interrupted` / `out of memory`; an opaque
        `null` rejection is what the engine throws when it cannot even allocate the error."""
        if message.endswith("interrupted"):
            return self.limits.time_message()
        if message.endswith("out of memory") or message == "null":
            return self.limits.memory_message()
        return message


def _apply_os_limits(limits: ScriptLimits) -> None:
    """Backstops in the child, should the engine's own limits ever fail."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not a POSIX system
        return
    cpu = int(limits.time_limit) + 3
    wanted = {
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_FSIZE: 0,
        resource.RLIMIT_CPU: cpu,
        resource.RLIMIT_AS: limits.memory_limit + ADDRESS_SPACE_MARGIN,
    }
    for which, value in wanted.items():
        with contextlib.suppress(ValueError, OSError):
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, hard))


def _c_stack_size() -> int:
    """This thread's C stack size (the engine's stack must fit in it)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not a POSIX system
        return 8 * 1024 * 1024
    return 8 * 1024 * 1024 if soft == resource.RLIM_INFINITY else int(soft)


def worker_main() -> int:
    """The child: read the job line, run it, answer world calls over stdin/stdout, exit."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        stdout.write(orjson.dumps(message) + b"\n")
        stdout.flush()

    send({"ready": True})  # the parent starts the script's clock now, not at process start
    job = orjson.loads(stdin.readline() or b"null")
    if not isinstance(job, dict):
        return 2
    limits = ScriptLimits(**job["limits"])
    _apply_os_limits(limits)
    limits = replace(limits, stack_limit=min(limits.stack_limit, _c_stack_size() // 2))

    def host(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        send({"calls": calls})
        answer = orjson.loads(stdin.readline() or b"null")
        if not isinstance(answer, dict) or not isinstance(answer.get("replies"), list):
            raise ScriptError("the world stopped answering")
        return list(answer["replies"])

    run = _Run(load_prelude(), job["init"], job["script"], limits, host)
    send(run.outcome())
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
