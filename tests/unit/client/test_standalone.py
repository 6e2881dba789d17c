"""The client installs and imports alone: nothing of the relay, the world or the server's
dependencies is imported by any module of `vttrelay.client` (its generator lives in tools/).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

from tests.support.client_dist import CLIENT, copy_client_distribution

import vttrelay.client

BLOCKED = (
    "vttrelay.relay",
    "vttrelay.world",
    "vttrelay.cli",
    "vttrelay.server",
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
    for info in pkgutil.walk_packages(vttrelay.client.__path__, "vttrelay.client."):
        importlib.import_module(info.name)
    relay = vttrelay.client.Client("http://127.0.0.1:9", "key")
    assert relay.dnd5e.skill_check and relay.streams.chat
    print("ok", vttrelay.client.__file__)
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
    assert done.stdout.split()[1].startswith(str(src)), done.stdout


def test_the_client_distribution_holds_only_the_client(tmp_path: Path) -> None:
    """`pip install ./clients/python` builds a wheel of `vttrelay.client` alone, needing only
    httpx and httpx-sse; it imports with the server's modules and dependencies blocked."""
    distribution = copy_client_distribution(tmp_path)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(tmp_path / "dist"),
            str(distribution),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("vttrelay_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("/METADATA"))).decode()
        archive.extractall(tmp_path / "site")
    code = {n for n in names if not n.startswith("vttrelay_client-")}
    shipped = [*CLIENT.rglob("*.py"), CLIENT / "py.typed"]  # py.typed: mypy reads its types
    assert code == {f"vttrelay/client/{p.relative_to(CLIENT)}" for p in shipped}
    requires = sorted(line for line in metadata.splitlines() if line.startswith("Requires-Dist"))
    assert requires == ["Requires-Dist: httpx-sse>=0.4", "Requires-Dist: httpx>=0.27"]
    # -S: no site processing, so the server's editable install (a .pth file) is not on the path;
    # the installed dependencies (httpx...) are, after the unpacked wheel.
    path = os.pathsep.join([str(tmp_path / "site"), sysconfig.get_paths()["purelib"]])
    done = subprocess.run(
        [sys.executable, "-S", "-c", SCRIPT.format(blocked=BLOCKED)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": path},
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1].startswith(str(tmp_path / "site")), done.stdout
