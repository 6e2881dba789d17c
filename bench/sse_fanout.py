"""SSE fan-out: N concurrent subscribers on one world; event latency and relay memory.

Run: `python -m bench.sse_fanout [--subscribers 1000] [--events 100] [--interval-ms 50] [--pin]`.

The relay runs in its own process (`bench.relay_server`: the product's app on uvloop, 127.0.0.1)
and one fake world in another (`bench.fake_world`), started and stopped by pid through
`bench.harness.Stack`. This process opens the subscribers of `GET /chat/subscribe` as raw HTTP/1.1
streams (a non-blocking socket each, read with `recvmsg`, each read stamped with CLOCK_MONOTONIC),
then asks the fake world to emit chat events, each stamped with its emission time on the same clock.
For each event it takes the time until the last subscriber received it, and prints p50/p99 of
that over the events, the p50 over every single delivery, and the relay's RSS per subscriber
(RSS with the subscribers connected minus RSS before, divided by N). It takes well under two
minutes with the defaults and is not part of the test suite.

Two receipt times per read: when this process read it (the figures above), and when the kernel
put it in the subscriber's socket (`SO_TIMESTAMPNS`, the "kernel" columns). They differ by this
process's own queue (it reads for all subscribers one after the other): what is left in the
kernel figures is the relay's, its send calls one after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import socket
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bench.harness import Stack
from bench.stats import kib, mib, percentile, table

CONNECT_CONCURRENCY = 200
CONNECT_TIMEOUT = 60.0
WARMUP_EVENTS = 5
FRAME = re.compile(rb"id: (\d+)\nevent: chat-create\n")
CONNECTED = b"event: connected"
SO_TIMESTAMPNS = 35  # Linux (asm-generic/socket.h); the socket module does not name it
TIMESPEC = struct.Struct("@qq")
ANCILLARY = socket.CMSG_SPACE(TIMESPEC.size)


@dataclass
class Deliveries:
    """When each subscriber received each event: event id -> receipt times (ns, this process's
    read; and the kernel's receipt in the socket, on the same monotonic clock)."""

    times: dict[int, list[int]] = field(default_factory=dict)
    kernel_times: dict[int, list[int]] = field(default_factory=dict)
    connected: int = 0
    refused: list[str] = field(default_factory=list)
    # CLOCK_REALTIME - CLOCK_MONOTONIC: the kernel stamps reads on the first, the world the second
    clock_offset: int = field(default_factory=lambda: time.time_ns() - time.monotonic_ns())

    def record(self, event_id: int, now: int, kernel: int | None) -> None:
        self.times.setdefault(event_id, []).append(now)
        if kernel is not None:
            self.kernel_times.setdefault(event_id, []).append(kernel - self.clock_offset)


class Subscriber:
    """One raw SSE stream: a non-blocking socket that sends the GET, then stamps every read,
    with this process's clock and the kernel's receive time (`recvmsg` with SO_TIMESTAMPNS)."""

    def __init__(self, sock: socket.socket, deliveries: Deliveries) -> None:
        self.sock = sock
        self.deliveries = deliveries
        self.buffer = b""
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_readable(self) -> None:
        try:
            data, ancillary, _, _ = self.sock.recvmsg(65536, ANCILLARY)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(exc)
            return
        now = time.monotonic_ns()
        if not data:
            self._lost(None)
            return
        kernel = None
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = TIMESPEC.unpack(value[: TIMESPEC.size])
                kernel = seconds * 1_000_000_000 + nanoseconds
        buffer = self.buffer + data
        if not self.ready.done():
            if CONNECTED not in buffer:
                self.buffer = buffer
                return
            if not buffer.startswith(b"HTTP/1.1 200"):
                self.deliveries.refused.append(buffer[:200].decode(errors="replace"))
            self.deliveries.connected += 1
            self.ready.set_result(None)
        end = buffer.rfind(b"\n\n")
        if end < 0:
            self.buffer = buffer
            return
        for match in FRAME.finditer(buffer, 0, end + 2):
            self.deliveries.record(int(match.group(1)), now, kernel)
        self.buffer = buffer[end + 2 :]

    def _lost(self, exc: Exception | None) -> None:
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"stream closed early: {exc}"))

    def close(self) -> None:
        if self.sock.fileno() >= 0:
            asyncio.get_running_loop().remove_reader(self.sock.fileno())
            self.sock.close()


async def open_subscribers(stack: Stack, count: int, deliveries: Deliveries) -> list[Subscriber]:
    """Open `count` streams and wait for every `connected` event."""
    loop = asyncio.get_running_loop()
    path = f"/chat/subscribe?clientId={stack.client_ids[0]}"
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{stack.port}\r\nx-api-key: {stack.api_key}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    subscribers: list[Subscriber] = []

    async def one() -> None:
        async with gate:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            sub = Subscriber(sock, deliveries)
            subscribers.append(sub)
            await loop.sock_connect(sock, ("127.0.0.1", stack.port))
            await loop.sock_sendall(sock, request)
            loop.add_reader(sock.fileno(), sub.on_readable)
            await sub.ready

    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            await asyncio.gather(*(one() for _ in range(count)))
    except BaseException:
        for sub in subscribers:
            sub.close()
        raise
    if deliveries.refused:
        raise RuntimeError(f"{len(deliveries.refused)} streams refused: {deliveries.refused[0]}")
    return subscribers


async def emit(stack: Stack, events: int, interval_ms: float) -> list[int]:
    """Have the fake world emit chat events; returns their emission times (ns)."""
    assert stack.world is not None
    await stack.world.send(f"emit {events} {interval_ms}")
    times: list[int] = orjson.loads(
        await stack.world.expect("EMITTED", 30 + events * interval_ms / 1000)
    )
    return times


async def settle(deliveries: Deliveries, ids: range, want: int, timeout: float) -> None:
    """Wait until every event of `ids` reached `want` subscribers (or the timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(len(deliveries.times.get(i, ())) >= want for i in ids):
            return
        await asyncio.sleep(0.05)


@dataclass
class Result:
    subscribers: int
    events: int
    interval_ms: float
    delivered: float  # fraction of (event, subscriber) deliveries that arrived
    last_p50: float  # ms until the last subscriber had the event
    last_p99: float
    last_max: float
    all_p50: float  # ms, every single delivery
    kernel_last_p50: float  # the same as last_*, by the kernel's receipt in the socket
    kernel_last_p99: float
    kernel_last_max: float
    rss_before: int
    rss_with_subs: int
    rss_after_events: int
    relay_cpu: float  # relay CPU seconds during the measured events
    subscribers_cpu: float  # this process (the subscribers), same period
    world_cpu: float  # the fake world process, same period

    @property
    def per_subscriber(self) -> float:
        return (self.rss_with_subs - self.rss_before) / self.subscribers


async def run(subscribers: int, events: int, interval_ms: float, pin: bool) -> Result:
    with tempfile.TemporaryDirectory(prefix="sse-fanout-") as tmp:
        async with Stack(Path(tmp), worlds=1, pin=pin) as stack:
            assert stack.relay is not None and stack.world is not None
            await asyncio.sleep(0.5)
            rss_before = stack.relay.rss_bytes()
            deliveries = Deliveries()
            subs = await open_subscribers(stack, subscribers, deliveries)
            try:
                await stack.world.send(f"subs chat-events {subscribers} 30")
                reached = int(await stack.world.expect("SUBS", 40))
                if reached < subscribers:
                    raise RuntimeError(f"the world saw {reached} subscribers, not {subscribers}")
                await emit(stack, WARMUP_EVENTS, interval_ms)
                await settle(deliveries, range(1, WARMUP_EVENTS + 1), subscribers, 10)
                await asyncio.sleep(0.5)
                rss_with_subs = stack.relay.rss_bytes()

                cpu_before = stack.relay.cpu_seconds()
                own_before = time.process_time()
                world_before = stack.world.cpu_seconds()
                emitted = await emit(stack, events, interval_ms)
                first = WARMUP_EVENTS + 1
                ids = range(first, first + events)
                await settle(deliveries, ids, subscribers, 15)
                relay_cpu = stack.relay.cpu_seconds() - cpu_before
                own_cpu = time.process_time() - own_before
                world_cpu = stack.world.cpu_seconds() - world_before
                rss_after = stack.relay.rss_bytes()
            finally:
                for sub in subs:
                    sub.close()
    last: list[float] = []
    kernel_last: list[float] = []
    every: list[float] = []
    arrived = 0
    for event_id, sent in zip(ids, emitted, strict=True):
        got = deliveries.times.get(event_id, [])
        arrived += len(got)
        if len(got) == subscribers:
            last.append((max(got) - sent) / 1e6)
        every.extend((t - sent) / 1e6 for t in got)
        in_kernel = deliveries.kernel_times.get(event_id, [])
        if len(in_kernel) == subscribers:
            kernel_last.append((max(in_kernel) - sent) / 1e6)
    return Result(
        subscribers=subscribers,
        events=events,
        interval_ms=interval_ms,
        delivered=arrived / (subscribers * events),
        last_p50=percentile(last, 50),
        last_p99=percentile(last, 99),
        last_max=max(last) if last else math.nan,
        all_p50=percentile(every, 50),
        kernel_last_p50=percentile(kernel_last, 50),
        kernel_last_p99=percentile(kernel_last, 99),
        kernel_last_max=max(kernel_last) if kernel_last else math.nan,
        rss_before=rss_before,
        rss_with_subs=rss_with_subs,
        rss_after_events=rss_after,
        relay_cpu=relay_cpu,
        subscribers_cpu=own_cpu,
        world_cpu=world_cpu,
    )


def report(result: Result) -> str:
    latency = table(
        [
            "subscribers",
            "events",
            "interval ms",
            "delivered",
            "last subscriber p50 ms",
            "p99 ms",
            "max ms",
            "every delivery p50 ms",
            "kernel: last p50 / p99 / max ms",
            "CPU s: relay / subscribers / world",
        ],
        [
            [
                f"{result.subscribers:,}",
                str(result.events),
                f"{result.interval_ms:g}",
                f"{result.delivered:.2%}",
                f"{result.last_p50:.1f}",
                f"{result.last_p99:.1f}",
                f"{result.last_max:.1f}",
                f"{result.all_p50:.1f}",
                f"{result.kernel_last_p50:.1f} / {result.kernel_last_p99:.1f}"
                f" / {result.kernel_last_max:.1f}",
                f"{result.relay_cpu:.2f} / {result.subscribers_cpu:.2f} / {result.world_cpu:.2f}",
            ]
        ],
    )
    memory = table(
        [
            "relay RSS before MiB",
            "with subscribers MiB",
            "after the events MiB",
            "per subscriber KiB",
        ],
        [
            [
                f"{mib(result.rss_before):.1f}",
                f"{mib(result.rss_with_subs):.1f}",
                f"{mib(result.rss_after_events):.1f}",
                f"{kib(result.per_subscriber):.1f}",
            ]
        ],
    )
    return f"SSE fan-out on one world\n\n{latency}\n\n{memory}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--interval-ms", type=float, default=50.0)
    parser.add_argument("--pin", action="store_true", help="relay on core 0, the rest on core 1")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        import uvloop

        result = uvloop.run(run(args.subscribers, args.events, args.interval_ms, args.pin))
    except ImportError:
        result = asyncio.run(run(args.subscribers, args.events, args.interval_ms, args.pin))
    print(report(result))
    print(f"\n(took {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
