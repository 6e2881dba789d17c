"""The client installs and imports alone: nothing of the relay, the world or the server's
dependencies is imported by any module of `vttrelay.client` (codegen, a development tool, aside).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import vttrelay.client

BLOCKED = (
    "vttrelay.relay",
    "vttrelay.world",
    "vttrelay.cli",
    "aiohttp",
    "uvloop",
    "orjson",
    "quickjs",
    "d20",
    "PIL",
    "yoyo",
)

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    BLOCKED = {blocked!r}

    class Block:
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ImportError(f"the client imported {{name}}")
            return None

    sys.meta_path.insert(0, Block())
    import vttrelay.client
    for info in pkgutil.iter_modules(vttrelay.client.__path__, "vttrelay.client."):
        if info.name != "vttrelay.client.codegen":
            importlib.import_module(info.name)
    relay = vttrelay.client.Client("http://127.0.0.1:9", "key")
    assert relay.dnd5e.skill_check and relay.streams.chat
    print("ok", len([m for m in sys.modules if m.startswith("vttrelay.client")]))
    """
)


def test_the_client_imports_nothing_of_the_server() -> None:
    src = Path(vttrelay.client.__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(blocked=BLOCKED)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok ")
