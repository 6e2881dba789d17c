"""The world's heavy-work process (`runtime.heavy` starts it): `python -m
vttrelay.world.runtime.heavy_worker NICENESS`.

It lowers its priority by NICENESS, ignores SIGINT, reads the parent's `sys.path` (the first
message), then runs jobs until its stdin ends: each `(fn, args, kwargs, deadline)` in, `(True,
result)` or `(False, exception)` out, as `heavy.send`/`heavy.receive` frame them. Its stdout
carries only those answers: anything a job prints goes to stderr.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from typing import Any

from vttrelay.world.runtime.heavy import Checkpoint, receive, receive_bytes, send


def _answer(job: bytes) -> bytes:
    """Run one job; its answer, pickled (an answer that cannot be pickled becomes an error)."""
    result: tuple[bool, Any]
    try:
        fn, args, kwargs, deadline = pickle.loads(job)
        checkpoint = Checkpoint(deadline)
        checkpoint()  # queued past its deadline: it does not start
        result = (True, fn(*args, **kwargs, checkpoint=checkpoint))
    except Exception as exc:
        result = (False, exc)
    try:
        return pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        failure = RuntimeError(f"the heavy work's answer could not be sent back: {exc!r}")
        return pickle.dumps((False, failure), pickle.HIGHEST_PROTOCOL)


def main(argv: list[str]) -> None:
    with contextlib.suppress(AttributeError, OSError, IndexError, ValueError):  # no os.nice
        os.nice(int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a job's prints go to stderr
    jobs = sys.stdin.buffer
    sys.path[:] = receive(jobs)
    while True:
        try:
            job = receive_bytes(jobs)
        except (EOFError, OSError):  # the parent closed it, or is gone
            return
        send(answers, _answer(job))


if __name__ == "__main__":
    main(sys.argv)
