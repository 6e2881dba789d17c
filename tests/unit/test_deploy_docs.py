"""docs/deploy.md and the README hold the deployment files under docs/deploy/ verbatim: the blocks
a reader copies are the ones tests/e2e/deploy runs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["nginx.conf", "Caddyfile"])
@pytest.mark.parametrize("page", ["docs/deploy.md", "README.md"])
def test_page_holds_the_file_verbatim(page: str, name: str) -> None:
    block = (ROOT / "docs" / "deploy" / name).read_text(encoding="utf-8")
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"\n{block}```\n" in text, f"{page} does not hold docs/deploy/{name} as it is"
