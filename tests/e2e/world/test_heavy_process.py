"""The embedded world's heavy-work process as an operator meets it with `vttrelay serve`: the
first picture starts one worker, a child of serve (not a thread of it), which draws every later
picture; serve stopped (SIGTERM, or Ctrl-C reaching the whole process group) ends the worker
with it and prints no traceback; serve SIGKILLed leaves no worker behind; and a program that
embeds the world without a main guard gets its pictures (the worker does not run it again)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
from bench.procs import free_port
from tests.support.e2e import eventually
from tests.support.heavy_jobs import alive
from tests.support.relay import start_serve, stop_process

import vttrelay


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc/*/stat)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _workers(pid: int) -> set[int]:
    """`pid`'s children that are heavy-work processes (`runtime.heavy_worker`)."""
    found = set()
    for child in _children(pid):
        try:
            if (
                b"vttrelay.world.runtime.heavy_worker"
                in Path(f"/proc/{child}/cmdline").read_bytes()
            ):
                found.add(child)
        except OSError:
            continue
    return found


async def _picture(base: str, key: str, width: int = 1024) -> None:
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
        got = await api.get("/scene/image", params={"width": width}, timeout=30)
    assert got.status_code == 200, got.text
    assert got.content.startswith(b"\x89PNG")


async def _serve_with_a_worker(
    tmp_path: Path, **options: Any
) -> tuple[asyncio.subprocess.Process, str, int]:
    """A serve that has drawn two pictures (`options`: to `start_serve`): (its process, its base
    URL, its one worker)."""
    port = free_port()
    serve, lines = await start_serve(tmp_path / "data", port, **options)
    base, key = f"http://127.0.0.1:{port}", lines[1].removeprefix("API key: ")
    try:
        assert _workers(serve.pid) == set()  # started on first use
        await _picture(base, key)
        workers = _workers(serve.pid)
        assert len(workers) == 1, workers
        await _picture(base, key, 2048)
        assert _workers(serve.pid) == workers  # kept, and only one
    except BaseException:
        await stop_process(serve)
        raise
    return serve, base, workers.pop()


async def test_the_worker_stops_with_serve(tmp_path: Path) -> None:
    serve, _, worker = await _serve_with_a_worker(tmp_path)
    await stop_process(serve)
    assert serve.returncode == 0
    await eventually(lambda: not alive(worker))


async def test_ctrl_c_stops_serve_and_its_worker_without_a_traceback(tmp_path: Path) -> None:
    serve, _, worker = await _serve_with_a_worker(tmp_path, stderr=asyncio.subprocess.PIPE)
    try:
        for pid in (worker, serve.pid):  # what Ctrl-C in a terminal does: the whole group
            os.kill(pid, signal.SIGINT)
        assert serve.stderr is not None
        _, err = await asyncio.wait_for(serve.communicate(), 30)
    finally:
        await stop_process(serve)
    assert serve.returncode == 0, err.decode()[-2000:]
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode()[-2000:]
    await eventually(lambda: not alive(worker))


async def test_a_killed_serve_leaves_no_worker(tmp_path: Path) -> None:
    serve, _, worker = await _serve_with_a_worker(tmp_path)
    try:
        os.kill(serve.pid, signal.SIGKILL)
        await eventually(lambda: not alive(serve.pid))  # (a worker left would hold its pipes)
        await eventually(lambda: not alive(worker))
        await asyncio.wait_for(serve.communicate(), 10)  # its pipes closed: nothing holds them
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
        await stop_process(serve)


async def _run(tmp_path: Path, program: str, *args: str) -> str:
    """Run `program` (Python source) with `args` in `tmp_path`, to its end; its stdout (the test
    fails if it does not exit 0)."""
    script = tmp_path / "program.py"
    script.write_text(program)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), *args, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        async with asyncio.timeout(60):
            out, err = await proc.communicate()
    finally:
        await stop_process(proc)
    assert proc.returncode == 0, err.decode()[-2000:]
    return out.decode()


SCRIPT = """
import asyncio, sys
from pathlib import Path
from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.world import World

print("script started", flush=True)
world = World.open(Path(sys.argv[1]), actions=standard_table())
frame = {"type": "scene-screenshot", "requestId": "r1", "width": "512"}
reply = asyncio.run(world.handle(frame))
world.close()
print(reply.get("error") or reply["data"]["imageData"][:22], flush=True)
"""


async def test_a_script_that_embeds_the_world_without_a_main_guard_draws_pictures(
    tmp_path: Path,
) -> None:
    """A program that opens the world at its top level (no `if __name__ == "__main__"`) gets
    its picture, and the worker does not run that program again (as `multiprocessing`'s spawned
    children would: each would open the world and start a worker of its own)."""
    out = await _run(tmp_path, SCRIPT, str(tmp_path / "data"))
    assert out.splitlines() == ["script started", "data:image/png;base64,"]


FROM_A_COPY = """
import asyncio, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]  # a copy of vttrelay, put on the path by hand
import vttrelay
from tests.support import heavy_jobs as jobs
from vttrelay.world.runtime.heavy import HeavyWork

async def main():
    heavy = HeavyWork()
    try:
        print(vttrelay.__file__)
        print(await heavy.run(jobs.package_file))
    finally:
        heavy.close()

asyncio.run(main())
"""


async def test_the_worker_runs_the_vttrelay_its_parent_runs(tmp_path: Path) -> None:
    """A program that runs a copy of vttrelay (put on `sys.path` by hand, not installed) gets
    a worker that runs that same copy, not the one the interpreter would find by itself."""
    copy = tmp_path / "copy"
    shutil.copytree(
        Path(vttrelay.__file__).parent, copy / "vttrelay", ignore=shutil.ignore_patterns("*.pyc")
    )
    root = Path(__file__).resolve().parents[3]  # for `tests.support`
    parent, worker = (await _run(tmp_path, FROM_A_COPY, str(copy), str(root))).split()
    assert parent == worker == str(copy / "vttrelay" / "__init__.py")
