"""Who uses a data dir: every relay process holds a shared lock on `<data-dir>/vttrelay.lock`
while it runs (`hold`), and `vttrelay restore` needs the data dir alone (`exclusive`), so a
restore never replaces the files under a running relay and a relay never starts in the middle of
a restore. The locks are flock(2) locks: the kernel drops them when the process ends, however it
ends (a killed relay leaves no stale lock behind).
"""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path
from typing import IO

LOCK_FILE = "vttrelay.lock"


class DataDirBusy(Exception):
    """The data dir is in use by the other kind of user (the message says which)."""


def _lock(data_dir: Path, mode: int) -> IO[bytes] | None:
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = (data_dir / LOCK_FILE).open("a+b")
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


def release(handle: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    handle.close()


def is_lock_file(path: Path) -> bool:
    return path.name == LOCK_FILE


__all__ = ["LOCK_FILE", "DataDirBusy", "exclusive", "hold", "is_lock_file", "release"]
