"""Who uses a data dir: every relay process holds a shared lock on `<data-dir>/vttrelay.lock`
while it runs (`hold`), and `vttrelay restore` needs the data dir alone (`exclusive`), so a
restore never replaces the files under a running relay and a relay never starts in the middle of
a restore. The process that runs the data dir's embedded world (`vttrelay serve` without
`--no-world`, `vttrelay world run`) also holds an exclusive lock on `<data-dir>/world/world.lock`
(`hold_world`, taken before anything touches the stores), with its pid and command written in
it: two processes never run one world's store, and a second `serve` refused there issues no
token and revokes none. Every command that writes the world's files takes it too (`world pair`,
`reset`, `settings`; `restore`, after the data dir's own lock). The locks are flock(2) locks:
the kernel drops them when the process ends, however it ends (a killed relay leaves no stale
lock behind).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import IO

from vttrelay.world.runtime.world import WORLD_DIR, world_dir

LOCK_FILE = "vttrelay.lock"
WORLD_LOCK_FILE = "world.lock"
MAX_HOLDER_BYTES = 200  # what is read back of a world lock file's "pid command" line


class DataDirBusy(Exception):
    """The data dir is in use by the other kind of user (the message says which)."""


class WorldBusy(DataDirBusy):
    """The data dir's embedded world runs in another process (the message names its pid)."""


def _lock(data_dir: Path, mode: int, name: str = LOCK_FILE) -> IO[bytes] | None:
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = (data_dir / name).open("a+b")
    try:
        fcntl.flock(handle.fileno(), mode | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def hold(data_dir: Path) -> IO[bytes]:
    """A relay's shared lock on `data_dir` (several relay processes may share it); keep the
    returned file open while serving, `release` it at the end."""
    handle = _lock(Path(data_dir), fcntl.LOCK_SH)
    if handle is None:
        raise DataDirBusy(f"{data_dir} is being restored (vttrelay restore); start when it is done")
    return handle


def exclusive(data_dir: Path) -> IO[bytes]:
    """The data dir alone (for `vttrelay restore`), or DataDirBusy when a relay runs on it."""
    handle = _lock(Path(data_dir), fcntl.LOCK_EX)
    if handle is None:
        raise DataDirBusy(
            f"a relay is running on {data_dir}; stop it first (e.g. systemctl stop vttrelay)"
        )
    return handle


def hold_world(data_dir: Path, command: str = "vttrelay serve") -> IO[bytes]:
    """The exclusive lock on `data_dir`'s embedded world for this process (`command` is what
    runs it, written with the pid into the lock file for whoever is refused), or WorldBusy
    naming the process that has it. Keep the returned file open while the world may run."""
    handle = _lock(world_dir(Path(data_dir)), fcntl.LOCK_EX, WORLD_LOCK_FILE)
    if handle is None:
        pid, holder = _holder(world_dir(Path(data_dir)) / WORLD_LOCK_FILE)
        raise WorldBusy(
            f"the embedded world of {data_dir} is already served by another {holder} (pid {pid})"
        )
    handle.truncate(0)  # opened for appending: the line below is then the whole file
    handle.write(f"{os.getpid()} {command}\n".encode())
    handle.flush()
    return handle


def _holder(path: Path) -> tuple[str, str]:
    """The pid and command written in a world lock file ("?" and "process" while the holder
    has not written them yet)."""
    try:
        with path.open("rb") as file:
            line = file.read(MAX_HOLDER_BYTES).decode(errors="replace").strip()
    except OSError:
        line = ""
    pid, _, command = line.partition(" ")
    return (pid if pid.isdigit() else "?"), (command or "process")


def release(handle: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    handle.close()


def is_lock_file(path: Path) -> bool:
    """The relay's lock file (anywhere) or the world's (in a `world` folder): left out of
    backups, not data."""
    return path.name == LOCK_FILE or (
        path.name == WORLD_LOCK_FILE and path.parent.name == WORLD_DIR
    )


__all__ = [
    "LOCK_FILE",
    "WORLD_LOCK_FILE",
    "DataDirBusy",
    "WorldBusy",
    "exclusive",
    "hold",
    "hold_world",
    "is_lock_file",
    "release",
]
