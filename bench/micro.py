"""Micro-measurements of the relay's per-request hot spots, robust to a busy machine.

Run: `python -m bench.micro`. Each line is the minimum over 5 repeats (the least disturbed one):
parsing each recorded reply of the forwarded mix as `WorldGateway._on_text` does, writing one
request-log line as `log_requests` does at INFO (and the call when the level is higher), and a
request id as `forward.new_request_id` makes it.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import secrets
import tempfile
import timeit
from collections.abc import Callable

import orjson

from bench.replies import build_reply
from bench.stats import table

MIX_ACTIONS = ("get-actor-details", "skill-check", "chat-messages", "chat-send", "players")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # as `vttrelay` sets it up


def per_call_us(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> int:
    rows: list[list[str]] = []
    total = 0.0
    for action in MIX_ACTIONS:
        raw = build_reply(action, f"{action}_1_abcdef").encode()
        cost = per_call_us(functools.partial(orjson.loads, raw), 2000)
        total += cost
        rows.append([f"orjson.loads, {action} reply", f"{len(raw):,} B", f"{cost:.1f}"])
    rows.append(["orjson.loads, mix average", "", f"{total / len(MIX_ACTIONS):.1f}"])

    fd, path = tempfile.mkstemp(prefix="bench-log-")
    os.close(fd)
    try:
        with open(path, "w") as stream:
            handler = logging.StreamHandler(stream)
            handler.setFormatter(logging.Formatter(LOG_FORMAT))
            logger = logging.getLogger("bench.micro.access")
            logger.addHandler(handler)
            logger.propagate = False
            args = ("GET", "/dnd5e/get-actor-details", 200, 3.21)
            logger.setLevel(logging.INFO)
            cost = per_call_us(lambda: logger.info("%s %s %d %.1fms", *args), 5000)
            rows.append(["request-log line at INFO (to a file)", "", f"{cost:.1f}"])
            logger.setLevel(logging.WARNING)
            cost = per_call_us(lambda: logger.info("%s %s %d %.1fms", *args), 5000)
            rows.append(["request-log call below the level", "", f"{cost:.2f}"])
            logger.removeHandler(handler)
    finally:
        os.unlink(path)

    counter = itertools.count(1)
    cost = per_call_us(lambda: f"skill-check_{next(counter)}_{secrets.token_hex(3)}", 20000)
    rows.append(["request id with secrets.token_hex(3)", "", f"{cost:.2f}"])
    print(table(("what, per request", "size", "us"), rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
