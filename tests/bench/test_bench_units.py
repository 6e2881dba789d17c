"""Pure parts of the bench: request mixes, wrk's summary line, recorded replies, statistics."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

from bench import mixes, procs, replies, stats, wrkload  # noqa: E402


def test_spread_covers_every_world_and_action_and_alternates_worlds() -> None:
    worlds = [f"w{i}" for i in range(7)]
    spread = mixes.spread(mixes.FORWARDED, worlds)
    assert len(spread) == len(worlds) * len(mixes.FORWARDED)
    pairs = {(method, path) for method, path, _ in spread}
    assert len(pairs) == len(spread)  # every (world, action) pair exactly once
    for a, b in zip(spread, spread[1:], strict=False):
        assert a[1].rsplit("clientId=", 1)[1] != b[1].rsplit("clientId=", 1)[1]


def test_request_file_round_trip_and_one_line_rule() -> None:
    reqs = mixes.for_world(mixes.FORWARDED, "bench world/1")
    assert mixes.decode(mixes.encode(reqs)) == reqs
    assert all("clientId=bench%20world%2F1" in path for _, path, _ in reqs)
    with pytest.raises(ValueError):
        mixes.encode([("GET", "/a\tb", None)])


def test_wrk_summary_line_is_parsed() -> None:
    line = (
        'WRKJSON {"requests":5000,"duration_us":2000000,"bytes":1,"connect":0,"read":1,'
        '"write":0,"status":3,"timeout":2,"p50_us":1500,"p90_us":2000,"p99_us":9000,"max_us":1}'
    )
    got = wrkload.parse("Running 2s test\n" + line + "\n")
    assert (got.requests, got.non_2xx, got.timeouts, got.socket_errors) == (5000, 3, 2, 1)
    assert got.rps == 2500 and got.p50_ms == 1.5 and got.p99_ms == 9.0
    with pytest.raises(RuntimeError):
        wrkload.parse("unable to connect to 127.0.0.1:1 Connection refused")


def test_recorded_replies_echo_the_request_id() -> None:
    for action in (
        "get-actor-details",
        "skill-check",
        "chat-messages",
        "chat-send",
        "players",
        "roll",
        "entity",
        "search",
    ):
        frame = orjson.loads(replies.build_reply(action, 'id_"quoted"'))
        assert frame["type"] == action + "-result"
        assert frame["requestId"] == 'id_"quoted"'
        assert "error" not in frame
    details = orjson.loads(replies.build_reply("get-actor-details", "x"))["data"]
    assert len(details["items"]) == 17 and len(details["features"]) == 8
    assert all(len(item) == 11 for item in details["items"])  # Item sources have 11 keys
    unknown = orjson.loads(replies.build_reply("no-such-action", "x"))
    assert isinstance(unknown["error"], str)  # becomes a 400 through the relay


def test_percentile_and_spread() -> None:
    assert stats.percentile([5, 1, 4, 2, 3], 50) == 3
    assert stats.percentile(list(range(1, 101)), 99) == 99
    spread = stats.Spread.of([3.0, 1.0, 2.0])
    assert (spread.median, spread.low, spread.high) == (2.0, 1.0, 3.0)
    assert stats.fmt_spread(spread, 1) == "2.0 (1.0-3.0)"
    assert stats.fmt_spread(stats.Spread.of([4.0, 4.0]), 0) == "4"


def test_reply_sets_small_actor_and_recorded() -> None:
    """`small` keeps every reply under 600 bytes with the recorded keys; `actor` adds only the
    22 KB get-actor-details reply; `recorded` is every reply as recorded."""
    actions = ("get-actor-details", "skill-check", "chat-messages", "entity", "search", "roll")
    for action in actions:
        small = replies.build_reply(action, "r1", "small")
        frame = orjson.loads(small)
        assert frame["requestId"] == "r1" and frame["type"] == action + "-result"
        assert len(small) < 600, action
        recorded = orjson.loads(replies.build_reply(action, "r1", "recorded"))
        assert frame.keys() == recorded.keys()
    assert len(replies.build_reply("get-actor-details", "r1", "actor")) > 20_000
    assert len(replies.build_reply("entity", "r1", "actor")) < 600
    assert len(replies.build_reply("entity", "r1", "recorded")) > 50_000
    with pytest.raises(ValueError, match="unknown reply set"):
        replies.reply_body("roll", "huge")


def test_cost_line_is_the_ratio_of_cpu_per_request_at_20() -> None:
    from bench.__main__ import cost_lines, targets
    from bench.scenarios import Level, Run

    def level(scenario: str, cpu_s: float) -> Level:
        load = wrkload.LoadResult(1000, 1.0, 1.0, 4.0, 0, 0, 0)
        return Level(scenario, 20, (Run(load, cpu_s, 0, 0),))

    results = {"floor": [level("floor", 0.05)], "forwarded": [level("forwarded", 0.06)]}
    assert cost_lines(results) == ["forwarded cost: 1.20× the floor"]
    rows = {row[0]: row for row in targets(results)}
    assert rows["forwarded relay CPU <= 1.25x the floor's at 20"][1:] == ["1.20x", "PASS"]
    results["forwarded-22k"] = [level("forwarded-22k", 0.075)]
    assert cost_lines(results)[1] == "forwarded cost with the 22 KB reply: 1.50× the floor"


def test_cpu_seconds_counts_user_system_or_both(monkeypatch: pytest.MonkeyPatch) -> None:
    # a process that burns CPU in user space, then sleeps: its counts stay put while read
    burner = subprocess.Popen(
        [sys.executable, "-c", BURN_THEN_SLEEP], stdout=subprocess.PIPE, text=True
    )
    try:
        assert burner.stdout is not None and burner.stdout.readline() == "burnt\n"
        seen = {}
        for part in procs.CPU_PARTS:
            monkeypatch.setattr(procs, "cpu_part", part)
            seen[part] = procs.cpu_seconds(burner.pid)
        assert seen["user"] >= 0.3
        assert seen["all"] == pytest.approx(seen["user"] + seen["system"])
    finally:
        burner.kill()
        burner.wait(5)


BURN_THEN_SLEEP = """
import os, time
while os.times().user < 0.3:  # checked rarely: each check is a system call
    sum(i * i for i in range(100_000))
print("burnt", flush=True)
time.sleep(60)
"""


def test_free_port_is_below_the_ephemeral_range_and_free() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {procs.free_port() for _ in range(20)}
    assert len(ports) > 1  # drawn at random, not a fixed port
    for port in ports:
        assert port < low or low <= 10_000
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))  # free: a relay could listen on it
