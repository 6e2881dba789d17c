"""What the pytest plugin costs a test suite: starting the relay and its world once, resetting
the world before each test, and importing the plugin in a run that does not use it (issue 24).

Run: `python -m bench.plugin_reset [--starts 3] [--resets 30]`. It starts the plugin's harness
(`vttrelay.testing.harness`: the relay and the demo world on a thread of this process, a
temporary data dir) `--starts` times; in each, it changes the world as a test would (a roll
posted to chat, an actor created) and times `reset()` `--resets` times; and it times, in fresh
interpreters that have imported pytest, `import vttrelay.testing` (what every pytest run where
vttrelay is installed pays) beside `import vttrelay.testing.harness` (what a run that uses the
fixture pays). Prints
medians, minimums and maximums in milliseconds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.stats import Spread, fmt_number, table
from vttrelay.testing.harness import Harness


def change_the_world(url: str, key: str) -> None:
    headers = {"x-api-key": key}
    for path, body in (
        ("/roll", {"formula": "3d6", "createChatMessage": True}),
        ("/create", {"entityType": "Actor", "data": {"name": "Bench", "type": "npc"}}),
    ):
        answer = httpx.post(url + path, json=body, headers=headers, timeout=30)
        answer.raise_for_status()


def import_ms(module: str) -> float:
    """Milliseconds a fresh interpreter that has imported pytest spends importing `module`."""
    code = (
        "import time, pytest; t = time.perf_counter(); "
        f"import {module}; print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--resets", type=int, default=30)
    args = parser.parse_args()
    starts: list[float] = []
    resets: list[float] = []
    for _ in range(args.starts):
        with tempfile.TemporaryDirectory() as tmp:
            began = time.perf_counter()
            harness = Harness(Path(tmp), seed=7)
            relay = harness.start()
            starts.append((time.perf_counter() - began) * 1000)
            try:
                for _ in range(args.resets):
                    change_the_world(relay.url, relay.api_key)
                    began = time.perf_counter()
                    relay.reset()
                    resets.append((time.perf_counter() - began) * 1000)
            finally:
                harness.stop()
    imports = {
        module: [import_ms(module) for _ in range(5)]
        for module in ("vttrelay.testing", "vttrelay.testing.harness")
    }
    rows = [
        ["start (relay + world connected)", *_spread(starts), str(len(starts))],
        ["reset (snapshot restore)", *_spread(resets), str(len(resets))],
        *(
            [f"import {module} (after pytest)", *_spread(times), str(len(times))]
            for module, times in imports.items()
        ),
    ]
    print(table(["ms", "median", "min", "max", "runs"], rows))


def _spread(values: list[float]) -> list[str]:
    spread = Spread.of(values)
    return [fmt_number(spread.median), fmt_number(spread.low), fmt_number(spread.high)]


if __name__ == "__main__":
    main()
