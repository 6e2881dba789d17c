"""Child processes of sessions (an embedded world, a browser): each in its own process group,
recorded in a pid file until it is stopped, so that none outlives the relay unnoticed.

`spawn` starts a command in a new session (process group = its pid) with `VTTRELAY_SESSION=<id>`
in its environment and writes `<folder>/<id>.json` (`pid`, `id`). `stop` sends SIGTERM to the
group, SIGKILL after a grace period, and removes the file. A relay killed with SIGKILL leaves the
files behind: `reap` (run at the next start) kills every group whose leader is still alive and
carries that session id in its environment (a pid reused by another process is left alone),
then removes the files.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

log = logging.getLogger(__name__)

SESSION_ENV: Final = "VTTRELAY_SESSION"
STOP_GRACE: Final = 5.0


@dataclass
class Child:
    id: str
    process: asyncio.subprocess.Process

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None


def _marked(pid: int, session_id: str) -> bool:
    """Does process `pid` carry `VTTRELAY_SESSION=<session_id>` (it is ours, not a reused pid)?"""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{SESSION_ENV}={session_id}".encode() in environ.split(b"\0")


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


class ProcessRegistry:
    """The session processes of one relay, recorded under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _file(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.json"

    async def spawn(
        self, session_id: str, argv: list[str], env: dict[str, str], log_path: Path
    ) -> Child:
        with open(log_path, "ab") as out:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                env={**os.environ, **env, SESSION_ENV: session_id},
                start_new_session=True,
            )
        self._file(session_id).write_bytes(orjson.dumps({"pid": process.pid, "id": session_id}))
        return Child(session_id, process)

    async def stop(self, child: Child, grace: float = STOP_GRACE) -> None:
        """SIGTERM to the child's group, then SIGKILL; always waits for it and drops its file."""
        try:
            if child.running:
                _kill_group(child.pid, signal.SIGTERM)
                try:
                    async with asyncio.timeout(grace):
                        await child.process.wait()
                except TimeoutError:
                    _kill_group(child.pid, signal.SIGKILL)
                    await child.process.wait()
            _kill_group(child.pid, signal.SIGKILL)  # what the leader left in its group
        finally:
            self._file(child.id).unlink(missing_ok=True)

    def reap(self) -> list[int]:
        """Kill the groups a previous relay left running; returns their pids."""
        reaped = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                record = orjson.loads(path.read_bytes())
                pid, session_id = int(record["pid"]), str(record["id"])
            except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
                path.unlink(missing_ok=True)
                continue
            if _marked(pid, session_id):
                log.warning(
                    "session %s: reaping process group %d left by a previous run", session_id, pid
                )
                _kill_group(pid, signal.SIGKILL)
                reaped.append(pid)
            path.unlink(missing_ok=True)
        return reaped
