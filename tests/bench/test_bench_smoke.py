"""Smoke test of the bench harness: its own start/stop code, a real relay, a real fake world.

Runs the forwarded mix (200 requests over two worlds) and the health floor through the Python
loader (no wrk needed), checks every answer is a 200, that the fake world answered every
forwarded request, and that both processes are gone afterwards. A correctness check, not timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

from bench.harness import Stack  # noqa: E402
from bench.procs import alive, descendants  # noqa: E402

from bench import instructions, mixes, pyload  # noqa: E402


async def test_harness_runs_the_mix_and_cleans_up(tmp_path: Path) -> None:
    stack = Stack(tmp_path / "stack", worlds=2)
    async with stack:
        assert stack.relay is not None and stack.world is not None
        assert alive(stack.relay.pid) and alive(stack.world.pid)
        mix = mixes.spread(mixes.FORWARDED, stack.client_ids)
        result = await pyload.run_requests(stack.url, stack.api_key, mix, count=200, concurrency=20)
        assert result.failures == []
        assert result.statuses == {200: 200}
        assert result.timeouts == 0

        floor = await pyload.run_requests(
            stack.url, stack.api_key, mixes.HEALTH, count=50, concurrency=5
        )
        assert floor.statuses == {200: 50}

        await stack.world.send("stats")
        stats = orjson.loads(await stack.world.expect("STATS", 5))
        assert stats["requests"] == 200
        assert stack.relay.cpu_seconds() > 0
        assert stack.relay.rss_bytes() > 1024 * 1024
    assert stack.stopped()


async def test_scaled_stacks_answer_through_the_hop_and_through_workers(tmp_path: Path) -> None:
    """The scale scenarios' stacks: two instances over Redis with the load one hop away from the
    world, and one relay run as `--workers 2`; every call answered, every process gone after."""
    for name, instances, workers, target in (("hop", 2, 1, 1), ("workers", 1, 2, 0)):
        stack = Stack(
            tmp_path / name, worlds=1, instances=instances, workers=workers, target=target
        )
        async with stack:
            assert stack.redis is not None and alive(stack.redis.pid)
            assert stack.url != stack.world_url or stack.workers == 2
            mix = mixes.for_world(mixes.FORWARDED, stack.client_ids[0])
            result = await pyload.run_requests(
                stack.url, stack.api_key, mix, count=80, concurrency=8
            )
            assert result.failures == []
            assert result.statuses == {200: 80}
            assert stack.relay_cpu_seconds() > 0
            if stack.workers == 2:  # the supervisor's two workers are counted with it
                assert stack.relay is not None
                assert len(descendants(stack.relay.pid)) >= 2
        assert stack.stopped()


# Four relay starts under valgrind (each some tens of seconds on a quiet machine, minutes on a
# loaded one): this test gets a longer limit than the suite's 300 s.
@pytest.mark.timeout(900)
async def test_instructions_counts_the_relay_process_under_callgrind(tmp_path: Path) -> None:
    """`python -m bench.instructions`: the relay runs under valgrind in the Stack, serves the
    requests, stops, and its callgrind total grows with the requests it served."""
    few = await instructions.relay_instructions("forwarded", 5, tmp_path / "few")
    more = await instructions.relay_instructions("forwarded", 25, tmp_path / "more")
    assert few > 10_000_000  # a Python process's start-up alone is tens of millions
    assert more - few > 20 * 50_000  # each forwarded request costs far more than 50k
