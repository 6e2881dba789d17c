"""`vttrelay serve` refuses a bad deployment setting at start, with one line naming it, before
anything listens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.procs import free_port


def test_bad_trusted_proxy_refused_before_listening(tmp_path: Path) -> None:
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vttrelay",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path),
            "--trusted-proxy",
            "127.0.0.1,10.0.0.0/33",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "vttrelay serve: --trusted-proxy: not an address or network: '10.0.0.0/33'"
    ]
    assert not (tmp_path / "relay.db").exists()  # nothing made, nothing listened
