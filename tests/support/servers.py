"""Real database servers the tests start, each stopped by its pid: `redis-server` and
PostgreSQL (Debian's packages), on free ports of 127.0.0.1 with their files in temporary
directories. The `redis_server`, `postgres` and `postgres_url` fixtures of tests/conftest.py are
built on them.

- `start_redis_server(directory, port=None) -> RedisServer` (`.url`, `.port`, `.pid`, `.stop()`):
  one outside a fixture (with `port`, again where a stopped one was).
- `start_postgres() -> PostgresServer`: a PostgreSQL initialised in a temporary directory (as the
  `postgres` user when the tests run as root); `postgres_bin(name)` finds its programs.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

# A port for a server a test starts in a subprocess: drawn below the kernel's ephemeral range,
# so no other test's bind(0) or outgoing connection takes it while that process starts.
from bench.procs import free_port  # noqa: E402


@dataclass
class RedisServer:
    """A `redis-server` process started by `start_redis_server` (stopped by pid)."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Terminate the server by its pid and wait for it (idempotent)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis_server(directory: Path, port: int | None = None) -> RedisServer:
    """Start `redis-server` on a free port of 127.0.0.1 (or `port`: a restart), its files in
    `directory`, no persistence; returns once it answers PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    process = subprocess.Popen(
        [
            binary,
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--dir", str(directory),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--loglevel", "warning",
            "--logfile", str(directory / "redis.log"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    server = RedisServer(process, port, directory)
    deadline = time.monotonic() + 10
    while not _redis_answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            logged = directory / "redis.log"
            text = logged.read_text() if logged.exists() else ""
            raise RuntimeError(f"redis-server did not start on port {port}: {text[-500:]}")
        time.sleep(0.02)
    return server


def postgres_bin(name: str) -> str:
    """A PostgreSQL server program (initdb, postgres) from Debian's package, newest version."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        raise RuntimeError(f"PostgreSQL's {name} not found: install postgresql (.ci/run does)")
    return found[-1]


@dataclass
class PostgresServer:
    """A PostgreSQL server started for the test session (see the module docstring)."""

    process: subprocess.Popen[bytes]
    directory: str
    port: int

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """Create an empty database; returns its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_postgres() -> PostgresServer:
    """initdb into a new temporary directory and start the server on a free 127.0.0.1 port;
    waits until it accepts connections. Root cannot run PostgreSQL: as root, the directory is
    given to the `postgres` user and both programs run as it."""
    directory = tempfile.mkdtemp(prefix="vttrelay-pg-")
    user: str | None = None
    if os.geteuid() == 0:
        user = "postgres"
        shutil.chown(directory, user)
    data = os.path.join(directory, "data")
    subprocess.run(
        [postgres_bin("initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
         "--locale=C", "--no-sync"],
        check=True, capture_output=True, user=user,
    )  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [postgres_bin("postgres"), "-D", data, "-p", str(port), "-h", "127.0.0.1",
         "-k", directory, "-c", "fsync=off", "-c", "synchronous_commit=off",
         "-c", "full_page_writes=off", "-c", "max_connections=200"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, user=user,
    )  # fmt: skip
    server = PostgresServer(process, directory, port)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
            psycopg.connect(server.url(), connect_timeout=2).close()
            return server
        except Exception as exc:  # not listening yet, or still starting up
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start: {exc}") from exc
            time.sleep(0.1)
