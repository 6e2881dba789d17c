"""Where a caller's `source` and `path` point inside a world's file store: pure rules, no I/O.

The reference module leaves every check to the Foundry server behind it; the embedded world has
no server, so it enforces the store's roots itself (files-sheet-sessions §1.5-1.6). A path is a
`/`-separated string relative to its source's root. Refused, each with its own message: NUL and
other control characters, `\\` (a Windows separator), a drive letter (`C:`), a `..` segment,
percent escapes of a dot, a separator or NUL (`%2e`, `%2f`, `%5c`, `%00`: encoded traversal), a
segment longer than `MAX_NAME_BYTES` or a path longer than `MAX_PATH_CHARS`. A leading `/` and
doubled separators only mean the root and one separator (as Foundry's route helper strips them);
`.` segments are dropped. `within` is the last check, made on disk: a resolved path (symlinks
followed) must still lie inside its root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

SOURCES: Final = ("data", "public")
WRITABLE_SOURCES: Final = ("data",)
MAX_NAME_BYTES: Final = 255  # one segment, UTF-8 (the usual file-system limit)
MAX_PATH_CHARS: Final = 1024
_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_ENCODED: Final = re.compile(r"%(2e|2f|5c|00)", re.IGNORECASE)


class PathError(ValueError):
    """A path that may not be used: its message is the reply's error text."""


def check_source(source: str) -> str:
    if source not in SOURCES:
        raise PathError(f"Unknown file source '{source}': use one of {', '.join(SOURCES)}")
    return source


def segments(path: str) -> list[str]:
    """The path's segments, or PathError. `""`, `"/"` and `"."` are the root (no segments)."""
    if len(path) > MAX_PATH_CHARS:
        raise PathError(f"Path is too long ({len(path)} characters; at most {MAX_PATH_CHARS})")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise PathError("Path contains a control character")
    if "\\" in path:
        raise PathError(f"Invalid path '{path}': use '/' as the separator")
    if _ENCODED.search(path):
        raise PathError(f"Invalid path '{path}': percent-encoded dots and separators are refused")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    for part in parts:
        if part == "..":
            raise PathError(f"Invalid path '{path}': '..' is not allowed")
        if _DRIVE.match(part):
            raise PathError(f"Invalid path '{path}': drive letters are not allowed")
        if len(part.encode()) > MAX_NAME_BYTES:
            raise PathError(f"Name too long in path (at most {MAX_NAME_BYTES} bytes a segment)")
    return parts


def check_name(name: str) -> str:
    """A file name for an upload: one segment, not `.` or `..`."""
    parts = segments(name)
    if len(parts) != 1 or "/" in name:
        raise PathError(f"Invalid file name '{name}': one name without '/'")
    return parts[0]


def relative(parts: list[str]) -> str:
    """The canonical relative path of segments (what replies show)."""
    return "/".join(parts)


def within(root: Path, target: Path) -> bool:
    """Does `target`, with every symlink resolved, lie inside `root` (also resolved)?"""
    real_root = os.path.realpath(root)
    real = os.path.realpath(target)
    return real == real_root or real.startswith(real_root + os.sep)
