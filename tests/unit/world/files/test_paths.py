"""`world.files.paths`: which paths a caller may name in the file store (pure rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vttrelay.world.files import paths
from vttrelay.world.files.paths import PathError


def test_the_root_and_plain_paths() -> None:
    for root in ("", "/", ".", "//", "./."):
        assert paths.segments(root) == []
    assert paths.segments("/a//b/./c/") == ["a", "b", "c"]
    assert paths.segments("maps/50% off.png") == ["maps", "50% off.png"]
    assert paths.check_name("map.png") == "map.png"


@pytest.mark.parametrize(
    "path",
    [
        "..",
        "a/../../b",
        "%2e%2e/x",
        "%2E%2e/x",
        "a%2fb",
        "a%5cb",
        "a%00b",
        "a\\b",
        "a\x00b",
        "a\nb",
        "C:/x",
        "c:x",
        "x" * 256,
        "a/" * 600,
    ],
)
def test_refused(path: str) -> None:
    with pytest.raises(PathError):
        paths.segments(path)


@pytest.mark.parametrize("name", ["", "a/b", "..", ".", "/"])
def test_a_file_name_is_one_segment(name: str) -> None:
    with pytest.raises(PathError):
        paths.check_name(name)


def test_within_follows_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "in").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (root / "to-in").symlink_to(root / "in")
    (root / "to-out").symlink_to(tmp_path / "out")
    assert paths.within(root, root / "to-in" / "f")
    assert not paths.within(root, root / "to-out" / "f")
    assert not paths.within(root, tmp_path / "rootx")
    with pytest.raises(PathError):
        paths.check_source("s3")
