"""`vttrelay serve --ready-file PATH`: a machine-readable signal that the relay listens.

Once the relay listens (and its embedded world is connected), `serve` writes one JSON object
to PATH, atomically (a temporary file in the same directory, then a rename): whoever waits for
the file finds either nothing or the whole of it. `-` prints the same object as one line on
stdout instead. A start removes a file left by an earlier run before it listens, and a clean
stop removes it again, so a file that exists belongs to a relay that listens or was killed.

    {"url": "http://127.0.0.1:3010", "port": 3010, "pid": 4242, "version": "0.1.0",
     "clientId": "vttrelay-demo", "apiKey": "80547e50...", "seed": 7}

`clientId` is the embedded world's (null with `--no-world`), `apiKey` the key this start
printed (null when it printed none), `seed` the world's seed (null: unseeded), `pid` the
process to signal to stop the relay (with `--workers`, the supervisor).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TypedDict

import orjson

from vttrelay import __version__

STDOUT = "-"


class ReadyInfo(TypedDict):
    """What the ready file holds."""

    url: str
    port: int
    pid: int
    version: str
    clientId: str | None
    apiKey: str | None
    seed: int | None


def ready_info(
    url: str, port: int, client_id: str | None, api_key: str | None, seed: int | None
) -> ReadyInfo:
    """The ready file's object for this process."""
    return ReadyInfo(
        url=url,
        port=port,
        pid=os.getpid(),
        version=__version__,
        clientId=client_id,
        apiKey=api_key or None,
        seed=seed,
    )


def write_ready(path: str, info: ReadyInfo) -> None:
    """Write `info` to `path` atomically (readable by the owner only: it holds a key), or as
    one line on stdout for `-`."""
    data = orjson.dumps(info)
    if path == STDOUT:
        print(data.decode(), flush=True)
        return
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def clear_ready(path: str) -> None:
    """Remove the ready file (a stale one before listening, ours at a clean stop)."""
    if path and path != STDOUT:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
