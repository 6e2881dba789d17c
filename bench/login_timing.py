"""Does `POST /auth/login` tell a wrong password from an unknown email by its time? (issue 22)

Run: `python -m bench.login_timing [--rounds 30]`. It starts a relay on 127.0.0.1 (sign-up open,
per-IP limits off, SQLite in a temporary directory), registers one account, then times, over
real HTTP, alternating: a login with the right email and a wrong password, one with an unknown
email, and one with a malformed email; and prints each kind's minimum, median and maximum in
milliseconds. All three should cost one argon2id check (the unknown ones against a dummy hash).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.stats import table
from vttrelay.relay.accounts.settings import AccountSettings
from vttrelay.relay.app import create_app
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.listener import RelaySite, make_runner
from vttrelay.relay.store import RelayStore

PASSWORD = "BenchPassword1"
KINDS = {
    "wrong password": {"email": "bench@example.com", "password": "WrongPassword1"},
    "unknown email": {"email": "nobody@example.com", "password": "WrongPassword1"},
    "malformed email": {"email": "not an email", "password": "WrongPassword1"},
}


async def run(rounds: int) -> list[list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = AccountSettings(signup="open", auth_rate_limit=0)
        config = RelayConfig(host="127.0.0.1", port=0, data_dir=Path(tmp), accounts=settings)
        store = RelayStore(config.store_target)
        runner = make_runner(create_app(config, store), config, shutdown_timeout=2)
        await runner.setup()
        site = RelaySite(runner, config)
        await site.start()
        url = f"http://127.0.0.1:{site.port}"
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        try:
            async with aiohttp.ClientSession() as http:
                body = {"email": "bench@example.com", "password": PASSWORD}
                async with http.post(url + "/auth/register", json=body) as resp:
                    assert resp.status == 201, await resp.text()
                for _ in range(rounds):
                    for kind, body in KINDS.items():
                        start = time.perf_counter()
                        async with http.post(url + "/auth/login", json=body) as resp:
                            await resp.read()
                            assert resp.status == 401
                        times[kind].append((time.perf_counter() - start) * 1000)
        finally:
            await runner.cleanup()
            store.close()
    return [
        [kind, f"{min(t):.1f}", f"{statistics.median(t):.1f}", f"{max(t):.1f}"]
        for kind, t in times.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    rows = asyncio.run(run(args.rounds))
    print(table(["login refused for", "min ms", "median ms", "max ms"], rows))


if __name__ == "__main__":
    main()
