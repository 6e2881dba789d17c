"""A world's file store: the `data` and `public` sources under `<data-dir>/world/files/`.

What the module's FilePicker calls do on a Foundry server (files-sheet-sessions §1), done on a
folder of our own: `browse` lists a directory (the module's recursive walk included), `read`
answers a file for a download, and uploads are written to a partial file outside the sources and
moved into place whole (`os.replace`) once complete, so a reader never sees half a file and a
failed upload leaves nothing behind. An upload arrives whole (`put`, a data URL's bytes) or as a
`Transfer`: begun with its declared size, written chunk by chunk at increasing offsets, then
committed or aborted; a transfer idle for `TRANSFER_IDLE` seconds is dropped. Every path goes
through `paths.segments` and `paths.within` (no path leaves its source). `public` is read-only.
Methods do blocking file I/O: the actions call them in a worker thread.
"""

from __future__ import annotations

import mimetypes
import os
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from vttrelay.world.files import paths
from vttrelay.world.files.paths import PathError

PARTIAL_DIR: Final = ".partial"
MAX_UPLOAD_BYTES: Final = 250 * 1024 * 1024  # the reference's MAX_UPLOAD_SIZE_MB
MAX_DOWNLOAD_BYTES: Final = 64 * 1024 * 1024  # a download travels whole, base64, in one frame
MAX_LISTING: Final = 10_000  # entries one browse answers
MAX_TRANSFERS: Final = 8  # uploads in progress at once
TRANSFER_IDLE: Final = 60.0  # seconds without a chunk before a transfer is dropped
EXISTS: Final = "File already exists. Set overwrite to true to replace it."


class StoreError(ValueError):
    """A refused file operation: its message is the reply's error text."""


@dataclass
class Transfer:
    """An upload in progress: bytes go to `partial`, then move to `target` on commit."""

    id: str
    target: Path
    shown: str  # the path the reply names
    overwrite: bool
    size: int
    partial: Path
    written: int = 0
    touched: float = 0.0


class FileStore:
    """The store under `root` (`root/data`, `root/public`, `root/.partial`)."""

    def __init__(
        self,
        root: Path,
        *,
        max_upload_bytes: int = MAX_UPLOAD_BYTES,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
    ) -> None:
        self.root = Path(root)
        self.max_upload_bytes = max_upload_bytes
        self.max_download_bytes = max_download_bytes
        for name in (*paths.SOURCES, PARTIAL_DIR):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        self._transfers: dict[str, Transfer] = {}
        self._lock = threading.Lock()
        for stale in (self.root / PARTIAL_DIR).iterdir():  # left by a stopped world
            stale.unlink(missing_ok=True)

    # Paths ----------------------------------------------------------------------------------

    def source_root(self, source: str) -> Path:
        return self.root / paths.check_source(source)

    def locate(self, source: str, path: str) -> tuple[Path, list[str]]:
        """The file-system path of `path` in `source`, and its segments; PathError if the path
        is refused or leads (through a symlink) outside the source."""
        root = self.source_root(source)
        parts = paths.segments(path)
        target = root.joinpath(*parts)
        if not paths.within(root, target):
            raise PathError(f"Invalid path '{path}': it leads outside the '{source}' source")
        return target, parts

    # Browse ---------------------------------------------------------------------------------

    def _list(self, source: str, parts: list[str]) -> tuple[list[str], list[str]]:
        root = self.source_root(source)
        folder = root.joinpath(*parts)
        shown = paths.relative(parts)
        if not folder.is_dir() or not paths.within(root, folder):
            raise StoreError(f"Directory '{shown}' does not exist in the '{source}' source")
        dirs: list[str] = []
        files: list[str] = []
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if not paths.within(root, Path(entry.path)):
                continue  # a symlink out of the store is not shown
            rel = f"{shown}/{entry.name}" if shown else entry.name
            (dirs if entry.is_dir() else files).append(rel)
        return dirs, files

    def browse(self, source: str, path: str, recursive: bool) -> list[dict[str, str]]:
        """The module's listing: top-level directories, then files; with `recursive`, each
        directory's directories and files, and theirs one level further while the directory's
        path has fewer than 3 segments (files-sheet-sessions §1.2 step 4)."""
        _, parts = self.locate(source, path)
        dirs, files = self._list(source, parts)
        found: list[tuple[str, str]] = [(d, "directory") for d in dirs]
        found += [(f, "file") for f in files]
        if recursive:
            for top in dirs:
                sub_dirs, sub_files = self._list(source, top.split("/"))
                found += [(d, "directory") for d in sub_dirs] + [(f, "file") for f in sub_files]
                if len(top.split("/")) < 3:
                    for sub in sub_dirs:
                        inner_dirs, inner_files = self._list(source, sub.split("/"))
                        found += [(d, "directory") for d in inner_dirs]
                        found += [(f, "file") for f in inner_files]
                if len(found) > MAX_LISTING:
                    break
        if len(found) > MAX_LISTING:
            raise StoreError(f"Too many entries to list (more than {MAX_LISTING}): browse deeper")
        return [{"name": p.rsplit("/", 1)[-1], "path": p, "type": t} for p, t in found]

    # Read -----------------------------------------------------------------------------------

    def read(self, path: str) -> tuple[bytes, str]:
        """A file's bytes and media type for a download: `data` first, then `public` (both are
        served from one root, as on a Foundry server)."""
        for source in paths.SOURCES:
            target, _ = self.locate(source, path)
            if target.is_file():
                size = target.stat().st_size
                if size > self.max_download_bytes:
                    raise StoreError(
                        f"Failed to download file: {size} bytes is more than the "
                        f"{self.max_download_bytes} a download may carry"
                    )
                mime = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                return target.read_bytes(), mime
        raise StoreError("Failed to download file: 404 Not Found")

    # Upload ---------------------------------------------------------------------------------

    def begin(self, source: str, path: str, filename: str, overwrite: bool, size: int) -> Transfer:
        """Check an upload (source writable, path, name, size, the overwrite rule) and open its
        partial file; the returned transfer takes the bytes."""
        if source not in paths.WRITABLE_SOURCES:
            paths.check_source(source)
            raise StoreError(f"The '{source}' source is read-only")
        if size > self.max_upload_bytes:
            raise StoreError(
                f"File too large: {size} bytes (at most {self.max_upload_bytes} an upload)"
            )
        name = paths.check_name(filename)
        folder, parts = self.locate(source, path)
        target = folder / name
        if not paths.within(self.source_root(source), target):
            raise PathError(f"Invalid file name '{filename}': it leads outside the store")
        self._check_target(target, overwrite)
        with self._lock:
            self._sweep()
            if len(self._transfers) >= MAX_TRANSFERS:
                raise StoreError("Too many uploads in progress: try again shortly")
            transfer_id = secrets.token_hex(12)
            partial = self.root / PARTIAL_DIR / transfer_id
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            os.close(fd)
            transfer = Transfer(
                transfer_id,
                target,
                paths.relative([*parts, name]),
                overwrite,
                size,
                partial,
                touched=time.monotonic(),
            )
            self._transfers[transfer_id] = transfer
        return transfer

    def _check_target(self, target: Path, overwrite: bool) -> None:
        if target.is_dir():
            raise StoreError("A directory of that name exists")
        if (target.exists() or target.is_symlink()) and not overwrite:
            raise StoreError(EXISTS)

    def _get(self, transfer_id: Any) -> Transfer:
        with self._lock:
            self._sweep()
            transfer = self._transfers.get(str(transfer_id))
        if transfer is None:
            raise StoreError("Unknown or expired upload")
        return transfer

    def write(self, transfer_id: Any, offset: int, data: bytes) -> int:
        """Append a chunk at `offset` (the bytes written so far); returns the new total."""
        transfer = self._get(transfer_id)
        if offset != transfer.written:
            raise StoreError(f"Chunk at offset {offset}, expected {transfer.written}")
        if transfer.written + len(data) > transfer.size:
            self.abort(transfer_id)
            raise StoreError(f"More bytes than the declared {transfer.size}")
        with open(transfer.partial, "ab") as out:
            out.write(data)
        transfer.written += len(data)
        transfer.touched = time.monotonic()
        return transfer.written

    def commit(self, transfer_id: Any) -> str:
        """Move a complete upload into place (creating its folders); returns its path."""
        transfer = self._get(transfer_id)
        try:
            if transfer.written != transfer.size:
                raise StoreError(f"Upload incomplete: {transfer.written} of {transfer.size} bytes")
            if transfer.size == 0:
                raise StoreError("Decoded file data is empty")
            self._check_target(transfer.target, transfer.overwrite)
            transfer.target.parent.mkdir(parents=True, exist_ok=True)
            if not paths.within(self.root / paths.SOURCES[0], transfer.target.parent):
                raise PathError("Invalid path: it leads outside the store")
            os.replace(transfer.partial, transfer.target)
            return transfer.shown
        finally:
            self.abort(transfer_id)

    def abort(self, transfer_id: Any) -> None:
        with self._lock:
            transfer = self._transfers.pop(str(transfer_id), None)
        if transfer is not None:
            transfer.partial.unlink(missing_ok=True)

    def put(self, source: str, path: str, filename: str, data: bytes, overwrite: bool) -> str:
        """A whole upload at once (a data URL's bytes)."""
        transfer = self.begin(source, path, filename, overwrite, len(data))
        try:
            self.write(transfer.id, 0, data)
        except BaseException:
            self.abort(transfer.id)
            raise
        return self.commit(transfer.id)

    def _sweep(self) -> None:
        """Drop transfers idle past TRANSFER_IDLE (the caller holds the lock)."""
        now = time.monotonic()
        for transfer_id, transfer in list(self._transfers.items()):
            if now - transfer.touched > TRANSFER_IDLE:
                del self._transfers[transfer_id]
                transfer.partial.unlink(missing_ok=True)

    def close(self) -> None:
        with self._lock:
            transfers = list(self._transfers.values())
            self._transfers.clear()
        for transfer in transfers:
            transfer.partial.unlink(missing_ok=True)

    def snapshot(self, dest: Path) -> None:
        """Copy the stored files (both sources) under `dest`, for `restore`."""
        for source in paths.SOURCES:
            shutil.copytree(self.root / source, Path(dest) / source, symlinks=True)

    def restore(self, snapshot: Path) -> None:
        """Put back the files `snapshot` copied: every file stored since is gone, and every
        upload in progress is dropped."""
        self.close()
        for source in paths.SOURCES:
            shutil.rmtree(self.root / source)
            shutil.copytree(Path(snapshot) / source, self.root / source, symlinks=True)

    def image_path(self, src: str) -> Path | None:
        """The file an image `src` (a scene background, a token or actor image) names in the
        store, or None (a URL, a refused path, no such file)."""
        if not src or "://" in src or src.startswith("data:"):
            return None
        for source in paths.SOURCES:
            try:
                target, _ = self.locate(source, src)
            except PathError:
                return None
            if target.is_file():
                return target
        return None
