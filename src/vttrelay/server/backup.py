"""`vttrelay backup DEST` and `vttrelay restore SRC`: a data dir copied while the relay serves,
and put back while it does not (DESIGN §12, Operations).

A backup is a folder with the data dir's layout: every SQLite database in it (the relay's store
`relay.db`, the demo world's `world/world.db`, each stored embedded world's under
`sessions/worlds/`) copied with SQLite's online backup API in one step (`Connection.backup`: one
read transaction, so each copy is that database as one committed moment; in WAL mode the relay
keeps writing meanwhile), and every other file (the worlds' uploaded files, the credentials key)
copied as it is. Left out: what a running relay keeps for itself (`-wal`/`-shm` files, the lock
file, `sessions/run` and `sessions/logs`, unfinished uploads in `.partial`, a connection being
written in `world/connection.tmp`; a file removed between the listing and its copy). The copy is
built under a hidden name beside DEST and renamed to DEST once it is whole and every database
passed `PRAGMA quick_check`; `vttrelay-backup.json` lists each file with its size and SHA-256.

`restore` checks the backup against that list first, then takes the data dir alone
(`datadir.exclusive`: refused while a relay runs on it) and its embedded world's lock
(`datadir.hold_world`, as every command that writes the world does: refused while a `world run`
runs it, which holds no relay lock) and copies the files in. A data dir that holds anything is
refused unless `replace`: what is there is then moved to a sibling folder
`<data-dir>.replaced-<UTC time>` (kept; nothing is deleted).

A data dir may hold a relay, an embedded world, or both: a machine that runs only `vttrelay world
run`, paired to a relay elsewhere (README: the two-machine pairing), holds just `world/` (its
store `world.db`, its uploaded files under `files/`, its stored relay connection
`connection.json`). `backup` copies whatever of the two is there and refuses only a data dir
with neither; the manifest is the same either way (a world-only backup simply lists no
`relay.db`), and `restore` puts back what it lists (`holds_relay` tells which kind it was).

A relay store elsewhere (`--database FILE`) is copied as the backup's `relay.db` (and restored
into the data dir there); one that does not exist is refused, as it was named. The relay's
store on PostgreSQL (`--database URL`) is not a file: `backup` refuses and names `pg_dump`
instead of copying half a relay.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from vttrelay import __version__
from vttrelay.server import datadir
from vttrelay.world.link.connection import CONNECTION_TMP
from vttrelay.world.runtime.world import WORLD_DIR, world_db_path, world_dir

MANIFEST: Final = "vttrelay-backup.json"
FORMAT: Final = 1
SQLITE_HEADER: Final = b"SQLite format 3\x00"
SKIPPED_DIRS: Final = frozenset({("sessions", "run"), ("sessions", "logs")})
SKIPPED_SUFFIXES: Final = ("-wal", "-shm", "-journal")
SKIPPED_FILES: Final = frozenset({(WORLD_DIR, CONNECTION_TMP)})  # a connection being written
STORE: Final = "relay.db"  # the relay's store in a backup (`--database FILE` is copied there)
BUSY_TIMEOUT: Final = 60.0  # seconds a copy waits for a database another process holds


class BackupError(Exception):
    """A backup or restore that cannot be done (the message says why, in one line)."""


@dataclass(frozen=True)
class Copied:
    """One file of a backup: its path under the data dir, kind (`sqlite` or `file`), size and
    SHA-256 as copied."""

    path: str
    kind: str
    size: int
    sha256: str


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def _files(root: Path) -> Iterator[Path]:
    """The regular files of the data dir a backup keeps, in a stable order."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        parts = here.relative_to(root).parts
        dirs[:] = sorted(d for d in dirs if d != ".partial" and (*parts, d)[:2] not in SKIPPED_DIRS)
        for name in sorted(files):
            path = here / name
            if name.endswith(SKIPPED_SUFFIXES) or datadir.is_lock_file(path) or name == MANIFEST:
                continue
            if (*parts, name) in SKIPPED_FILES:
                continue
            if path.is_file() and not path.is_symlink():
                yield path


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def copy_database(source: Path, target: Path) -> None:
    """`source` as one committed moment into `target` (a single file, no WAL), checked."""
    src = sqlite3.connect(source, timeout=BUSY_TIMEOUT)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)  # all pages in one step: one read transaction
            dst.execute("PRAGMA journal_mode=DELETE")
            check = dst.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            dst.close()
    finally:
        src.close()
    if check != "ok":
        raise BackupError(f"{source}: the copy fails SQLite's check ({check})")


def _copy(path: Path, target: Path) -> str:
    """`path` copied to `target` (a database as one committed moment); its kind."""
    if path.suffix == ".db" and _is_sqlite(path):
        copy_database(path, target)
        target.chmod(0o600)  # keys' and tokens' hashes, accounts: the owner's alone
        return "sqlite"
    shutil.copy2(path, target)
    return "file"


def holds_relay(files: list[Copied]) -> bool:
    """Whether a backup's files hold a relay store (else it is a world-only backup)."""
    return any(c.path == STORE for c in files)


def is_postgresql(database: str) -> bool:
    return database.startswith(("postgresql://", "postgres://"))


def backup(data_dir: Path, dest: Path, database: str = "") -> list[Copied]:
    """Copy `data_dir` into the new folder `dest` (see the module docstring); the files copied."""
    if is_postgresql(database):
        raise BackupError(
            "the relay's store is PostgreSQL (--database): back it up with pg_dump "
            "(pg_dump --format=custom --file vttrelay.dump URL; pg_restore puts it back); "
            "vttrelay backup copies SQLite data dirs only"
        )
    data_dir, dest = Path(data_dir), Path(dest)
    store = Path(database) if database else data_dir / STORE
    if database and not store.is_file():
        raise BackupError(f"{store} does not exist: no relay store to back up")
    stores = [store] if store.is_file() else []
    if not stores and not world_db_path(data_dir).is_file():
        raise BackupError(
            f"{data_dir} holds neither a relay store ({STORE}) nor an embedded world "
            f"({WORLD_DIR}/{world_db_path(data_dir).name}): nothing to back up"
        )
    if dest.exists():
        raise BackupError(f"{dest} already exists: name a new folder")
    if dest.resolve().is_relative_to(data_dir.resolve()):
        raise BackupError(f"{dest} is inside the data dir: name a folder outside it")
    building = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    building.mkdir(mode=0o700, parents=True)
    try:
        copied = []
        inside = [p for p in _files(data_dir) if p.relative_to(data_dir) != Path(STORE)]
        for path in [*stores, *inside]:
            rel = Path(STORE) if path == store else path.relative_to(data_dir)
            target = building / rel
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                kind = _copy(path, target)
            except FileNotFoundError:
                if path == store:
                    raise
                continue  # removed since the listing (a world's file deleted meanwhile)
            copied.append(Copied(rel.as_posix(), kind, target.stat().st_size, _digest(target)))
        manifest = {
            "format": FORMAT,
            "version": __version__,
            "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": [c.__dict__ for c in copied],
        }
        (building / MANIFEST).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        building.rename(dest)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return copied


def read_manifest(source: Path) -> list[Copied]:
    """The files a backup lists, each checked against its size and SHA-256 (BackupError)."""
    try:
        manifest = orjson.loads((source / MANIFEST).read_bytes())
        files = [Copied(**entry) for entry in manifest["files"]]
    except FileNotFoundError:
        raise BackupError(f"{source} is not a vttrelay backup (no {MANIFEST})") from None
    except (OSError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
        raise BackupError(f"{source / MANIFEST} cannot be read: {exc}") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source}: backup format {manifest.get('format')!r} is not known")
    for entry in files:
        path = source / entry.path
        if ".." in Path(entry.path).parts or Path(entry.path).is_absolute():
            raise BackupError(f"{source / MANIFEST}: {entry.path!r} is outside the backup")
        if not path.is_file() or path.stat().st_size != entry.size or _digest(path) != entry.sha256:
            raise BackupError(f"{path} is missing or changed since the backup was made")
    return files


def restore(
    source: Path, data_dir: Path, replace: bool = False
) -> tuple[list[Copied], Path | None]:
    """Put the backup `source` in `data_dir`; the files restored and where what was in the
    data dir went (None: it was empty)."""
    source, data_dir = Path(source), Path(data_dir)
    files = read_manifest(source)
    try:
        lock = datadir.exclusive(data_dir)
    except datadir.DataDirBusy as busy:
        raise BackupError(str(busy)) from None
    try:
        world_lock = datadir.hold_world(data_dir, "vttrelay restore")
    except datadir.WorldBusy as busy:
        datadir.release(lock)
        raise BackupError(str(busy)) from None
    try:
        present = _present(data_dir)
        moved_to = None
        if present:
            if not replace:
                raise BackupError(
                    f"{data_dir} is not empty: restore into an empty data dir, or add --replace "
                    "(what is there is moved aside, not deleted)"
                )
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            moved_to = data_dir.with_name(f"{data_dir.name}.replaced-{stamp}")
            moved_to.mkdir(mode=0o700)
            for path in present:
                target = moved_to / path.relative_to(data_dir)
                target.parent.mkdir(mode=0o700, exist_ok=True)
                path.rename(target)
        for entry in files:
            target = data_dir / entry.path
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copy2(source / entry.path, target)
        return files, moved_to
    finally:
        datadir.release(world_lock)
        datadir.release(lock)


def _present(data_dir: Path) -> list[Path]:
    """What `data_dir` holds besides its locks: its entries, the world folder's one by one (its
    lock file stays in place, held by the restore, so that no world starts meanwhile)."""
    present: list[Path] = []
    for path in sorted(data_dir.iterdir()):
        if path == world_dir(data_dir) and path.is_dir():
            present += [p for p in sorted(path.iterdir()) if not datadir.is_lock_file(p)]
        elif not datadir.is_lock_file(path):
            present.append(path)
    return present


__all__ = [
    "MANIFEST",
    "BackupError",
    "Copied",
    "backup",
    "holds_relay",
    "read_manifest",
    "restore",
]
