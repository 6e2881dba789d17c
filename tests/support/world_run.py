"""Helpers for tests of `vttrelay world run` as real processes paired to a real `vttrelay serve
--no-world` (the README's two-machine pairing): `pair_world` pairs a world's data dir by `vttrelay
world pair`, `world_run` starts it, `answers_as` waits until it answers through the relay, and
`runs` does both and stops it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
from tests.support.relay import run_vttrelay, stop_process


async def world_run(data: Path) -> asyncio.subprocess.Process:
    """`vttrelay world run` on `data` (its paired relay and token), as a real process."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", "world", "run", "--data-dir", str(data),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def answers_as(base: str, key: str, client_id: str) -> None:
    """The world `client_id` answers `/world-info` through the relay (within 30 s of starting)."""
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
        for _ in range(300):
            got = await api.get("/world-info", params={"clientId": client_id}, timeout=20)
            if got.status_code == 200:
                assert got.json()["type"] == "world-info-result"
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"world {client_id} never answered: {got.status_code} {got.text}")


async def pairing_code(relay_data: Path) -> str:
    code, out, err = await run_vttrelay("pair", "--data-dir", str(relay_data))
    assert code == 0, err
    return out.strip()


async def pair_world(world_data: Path, relay_data: Path, base: str) -> str:
    """`world_data`'s world paired with the relay at `base` (serving `relay_data`) by
    `vttrelay world pair`: its client id."""
    code, client_id, err = await run_vttrelay(
        "world", "pair", await pairing_code(relay_data), "--relay", base,
        "--data-dir", str(world_data),
    )  # fmt: skip
    assert code == 0, err
    return client_id.strip()


async def runs(world_data: Path, base: str, key: str, client_id: str) -> None:
    """A `world run` of `world_data` answers through the relay at `base`; then it is stopped."""
    world = await world_run(world_data)
    try:
        await answers_as(base, key, client_id)
    finally:
        await stop_process(world)
