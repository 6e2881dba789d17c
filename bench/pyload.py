"""A small Python load generator (aiohttp): a fixed number of requests at a fixed concurrency.

It is not the bench's loader (wrk is, see `wrkload.py`): it is slower than the relay. It serves
the smoke test, which checks that every request of the mix is answered with 200, and warm-ups.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp

from bench.mixes import Request
from bench.stats import percentile
from bench.wrkload import LoadResult


@dataclass
class PyLoadResult:
    """Every status seen, every latency, and the failures with their bodies."""

    statuses: Counter[int] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    timeouts: int = 0
    duration_s: float = 0.0

    def summary(self) -> LoadResult:
        total = sum(self.statuses.values())
        return LoadResult(
            requests=total,
            duration_s=self.duration_s,
            p50_ms=percentile(self.latencies_ms, 50),
            p99_ms=percentile(self.latencies_ms, 99),
            non_2xx=total - sum(n for s, n in self.statuses.items() if 200 <= s < 300),
            timeouts=self.timeouts,
            socket_errors=0,
        )


async def run_requests(
    base_url: str,
    api_key: str,
    mix: Sequence[Request],
    *,
    count: int,
    concurrency: int,
    timeout: float = 10.0,
) -> PyLoadResult:
    """Send `count` requests cycling through `mix`, `concurrency` at a time."""
    result = PyLoadResult()
    headers = {"x-api-key": api_key}
    next_index = 0
    client_timeout = aiohttp.ClientTimeout(total=timeout)

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal next_index
        while next_index < count:
            method, path, body = mix[next_index % len(mix)]
            next_index += 1
            start = time.perf_counter()
            try:
                async with session.request(
                    method, base_url + path, json=body, headers=headers
                ) as resp:
                    text = await resp.text()
                    status = resp.status
            except TimeoutError:
                result.timeouts += 1
                continue
            result.latencies_ms.append((time.perf_counter() - start) * 1000)
            result.statuses[status] += 1
            if status != 200 and len(result.failures) < 20:
                result.failures.append(f"{method} {path} -> {status} {text[:300]}")

    connector = aiohttp.TCPConnector(limit=concurrency)
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=connector, timeout=client_timeout) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    result.duration_s = time.perf_counter() - started
    return result
