"""Start-up cost of `vttrelay serve`: seconds to the "listening" line and resident memory then.

    python -m bench.startup [--runs 3] [-- extra serve arguments]

Each run starts `vttrelay serve` on a free port with a fresh data directory, reads VmRSS from
`/proc/<pid>/status` as soon as the "listening" line appears, then stops it by its pid (SIGTERM).
Prints each run and the medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def vm_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def one_start(extra: list[str]) -> tuple[float, float]:
    """(seconds to the listening line, RSS in MiB at that moment) of one `vttrelay serve`."""
    with tempfile.TemporaryDirectory() as data:
        argv = [sys.executable, "-m", "vttrelay", "serve", "--port", str(free_port())]
        argv += ["--data-dir", data, *extra]
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if " listening on " in line:
                    return time.perf_counter() - started, vm_rss_mib(proc.pid)
            raise RuntimeError("vttrelay serve exited before listening")
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more `vttrelay serve` arguments (after --)")
    args = parser.parse_args()
    runs = [one_start(args.extra) for _ in range(args.runs)]
    for seconds, rss in runs:
        print(f"start {seconds:.2f} s  rss {rss:.1f} MiB")
    print(
        f"median: start {statistics.median(s for s, _ in runs):.2f} s, "
        f"rss {statistics.median(r for _, r in runs):.1f} MiB"
    )


if __name__ == "__main__":
    main()
