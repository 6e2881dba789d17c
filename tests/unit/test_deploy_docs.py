"""docs/deploy.md and the README hold the deployment files under docs/deploy/ verbatim: the blocks
a reader copies are the ones tests/e2e/deploy runs; the systemd unit passes `systemd-analyze
verify` (with its ExecStart pointed at this environment's `vttrelay`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["nginx.conf", "Caddyfile"])
@pytest.mark.parametrize("page", ["docs/deploy.md", "README.md"])
def test_page_holds_the_file_verbatim(page: str, name: str) -> None:
    block = (ROOT / "docs" / "deploy" / name).read_text(encoding="utf-8")
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"\n{block}```\n" in text, f"{page} does not hold docs/deploy/{name} as it is"


@pytest.mark.parametrize("name", ["vttrelay.service", "vttrelay.toml"])
def test_deploy_page_holds_the_file_verbatim(name: str) -> None:
    block = (ROOT / "docs" / "deploy" / name).read_text(encoding="utf-8")
    assert f"\n{block}```\n" in (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is needed (Debian's systemd, in .ci/run)"
    vttrelay = Path(sys.executable).with_name("vttrelay")
    unit = (ROOT / "docs" / "deploy" / "vttrelay.service").read_text(encoding="utf-8")
    assert unit.count("/usr/local/bin/vttrelay ") == 1
    path = tmp_path / "vttrelay.service"
    path.write_text(unit.replace("/usr/local/bin/vttrelay ", f"{vttrelay} "))
    done = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True)
    assert done.returncode == 0 and "vttrelay.service" not in done.stderr, done.stderr
