"""`vttrelay serve` keeps a deep accept queue: a burst of connects is not dropped.

With aiohttp's default listen backlog (128) the kernel drops the SYNs of a burst of more than
~128 simultaneous connects while the relay is busy, and those clients stall for a second or more
(SYN retransmit); see bench/RESULTS.md. The test stops the relay process (SIGSTOP, so nothing is
accepted), opens a burst of connections and checks the kernel completed every handshake.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.procs import free_port

BURST = 300


def _somaxconn() -> int:
    """The kernel's cap on a listen backlog (Linux)."""
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return BURST


def _wait_listening(proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("vttrelay serve exited before listening")
            if "listening on" in line:
                return
    raise AssertionError("vttrelay serve did not start listening")


def _established(socks: list[socket.socket], timeout: float) -> int:
    """How many non-blocking connects completed their handshake within `timeout`."""
    pending = list(socks)
    done = 0
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        _, writable, _ = select.select([], pending, [], 0.05)
        for sock in writable:
            pending.remove(sock)
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                done += 1
    return done


def test_a_connect_burst_is_queued_not_dropped(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vttrelay", "serve", "--no-world", "--port", str(port)]
        + ["--data-dir", str(tmp_path / "data"), "--log-level", "WARNING"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    socks: list[socket.socket] = []
    try:
        _wait_listening(proc)
        os.kill(proc.pid, signal.SIGSTOP)  # the relay accepts nothing from now on
        for _ in range(BURST):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            socks.append(sock)
        got = _established(socks, 0.5)
        assert got >= min(BURST, _somaxconn()), f"{got} of {BURST} connects completed"
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        for sock in socks:
            sock.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
