"""One auto-start per world at a time, joined by the calls that come while it runs; a failed one
refused at once for the cooldown (with the time left), per credential; a start whose first
caller went away still answers the others."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tests.support.clock import FakeClock

from vttrelay.sessions.launches import Answer, Launches


def test_calls_during_a_start_share_it() -> None:
    async def run() -> None:
        launches = Launches()
        started = 0
        gate = asyncio.Event()

        async def start() -> Answer:
            nonlocal started
            started += 1
            await gate.wait()
            return 200, {"clientId": "w", "success": True}

        calls = [asyncio.ensure_future(launches.run("w", start)) for _ in range(5)]
        await asyncio.sleep(0)  # the callers run up to their wait
        assert launches.running("w")
        calls[0].cancel()  # the first caller goes away: the start goes on for the others
        await asyncio.sleep(0)
        assert launches.running("w")
        gate.set()
        answers = await asyncio.gather(*calls[1:])
        assert started == 1
        assert answers == [(200, {"clientId": "w", "success": True})] * 4
        assert not launches.running("w")

    asyncio.run(run())


def test_a_failed_start_is_cooled_down_per_attempt() -> None:
    async def run() -> None:
        clock = FakeClock()
        launches = Launches(cooldown=120, clock=clock)
        tries: list[str] = []

        def failing(name: str) -> Callable[[], Awaitable[Answer]]:
            async def start() -> Answer:
                tries.append(name)
                return 408, {"error": "login failed: nope", "message": "m"}

            return start

        assert await launches.run("w", failing("a"), attempt="cred-a") == (
            408,
            {"error": "login failed: nope", "message": "m"},
        )
        status, body = await launches.run("w", failing("a"), attempt="cred-a")
        assert status == 408 and body["message"] == "m"
        assert (
            body["error"]
            == "login failed: nope (auto-start blocked for 120s, retry after cooldown)"
        )
        clock.advance(100)
        status, body = await launches.run("w", failing("a"), attempt="cred-a")
        assert (
            body["error"] == "login failed: nope (auto-start blocked for 20s, retry after cooldown)"
        )
        # another credential is tried at once; another world too
        await launches.run("w", failing("b"), attempt="cred-b")
        await launches.run("v", failing("v"), attempt="cred-a")
        assert tries == ["a", "b", "v"]
        clock.advance(20)
        await launches.run("w", failing("a"), attempt="cred-a")  # cooled down: tried again
        assert tries == ["a", "b", "v", "a"]

    asyncio.run(run())


def test_a_joiner_waits_only_its_own_limit() -> None:
    async def run() -> None:
        launches = Launches()
        gate = asyncio.Event()

        async def slow() -> Answer:
            await gate.wait()
            return 200, {}

        first = asyncio.ensure_future(launches.run("w", slow))
        await asyncio.sleep(0)
        # the joiner's limit is asyncio.wait_for's: a real loop timeout, kept short
        status, body = await launches.run("w", slow, wait=0.05)
        assert status == 408 and "did not connect within 0.05 s" in body["error"]
        assert not first.done()  # the first caller still waits
        gate.set()
        assert await first == (200, {})

    asyncio.run(run())
