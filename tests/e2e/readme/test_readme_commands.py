"""Every shell command of the README, run for real, in the README's order, against a relay the
README's own `vttrelay serve` blocks start (a fresh data dir `data/` in the working directory,
whose demo key is `$KEY`), each command in a bash that keeps its block's variables; what each
prints must have the shape the README shows (`tests/support/readme.py`). The ids the README
shows (keys, codes, tokens, client ids) stand for the ones the run printed, so later commands
use those; `127.0.0.1:3010` is the test's port, `/tmp/` its temporary directory. Blocks marked
`<!-- readme-test: not run: WHY -->` are not run (each says why), `relay: ARGS` runs a block
against the relay started with those arguments, `relay stopped` with the relay stopped (started
again for the next block: a command that changes the world's store is refused while a relay
serves it), `own data dir` in a directory of its own, and
`stops after N s` lets a command that never ends run N seconds."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.procs import free_port
from tests.support.readme import Block, learned_ids, matches, shell_blocks

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
SENTINEL = "__readme_test_rc__"


class Lines:
    """The lines a process writes, read by a thread of their own."""

    def __init__(self, stream: object) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def until(self, done: object, timeout: float) -> list[str]:
        """Lines until `done(line)` is true (that line included) or `timeout` passes."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            got.append(line)
            if done(line):  # type: ignore[operator]
                break
        return got


def _environment(cwd: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTTRELAY_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["VTTRELAY_PORT"] = str(port)  # README commands that name no port reach the test's
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _workdir(path: Path) -> Path:
    """A working directory with the repository's docs/ and clients/ as the README's commands
    expect them (they are run from a checkout)."""
    path.mkdir(parents=True)
    for name in ("docs", "clients"):
        (path / name).symlink_to(ROOT / name)
    return path


class Relay:
    """`vttrelay serve ARGS` in the working directory (its stdout lines kept)."""

    def __init__(self, cwd: Path, env: dict[str, str], log: Path, args: str = "") -> None:
        with log.open("a") as stderr:
            self.proc = subprocess.Popen(
                ["vttrelay", "serve", *args.split()],
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        self.lines = Lines(self.proc.stdout)
        said = self.lines.until(lambda line: line.startswith("Try: "), 60)
        said += self.lines.until(lambda line: False, 1.5)  # the lines after `Try:`
        assert said and said[0].startswith("vttrelay "), said
        self.said = said

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Shell:
    """A bash whose variables and background jobs last for one README block."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines = Lines(self.proc.stdout)

    def run(self, command: str, timeout: float = 60) -> tuple[int, list[str]]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{command}\necho {SENTINEL}$?\n")
        self.proc.stdin.flush()
        got = self.lines.until(lambda line: SENTINEL in line, timeout)
        assert got and SENTINEL in got[-1], f"{command!r} did not end within {timeout} s: {got}"
        before, _, code = got[-1].partition(SENTINEL)
        return int(code), [*got[:-1], *([before] if before else [])]

    def more(self, seconds: float) -> list[str]:
        return self.lines.until(lambda line: False, seconds)

    def close(self) -> None:
        """Stop the block's background jobs, then the shell, then whatever they started: the shell
        leads a process group of its own (`start_new_session`), and a job such as
        `pair && world run &` is a subshell whose child a kill of the job's pid leaves running,
        so the whole group is stopped by its id (SIGTERM, then SIGKILL)."""
        group = self.proc.pid
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("kill $(jobs -p) 2>/dev/null; exit\n")
            self.proc.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(20)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and _group_alive(group):
                time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.wait()
        assert not _group_alive(group), "a README command left a process running"


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _substitute(text: str, port: int, tmp: Path, ids: dict[str, str]) -> str:
    text = text.replace("127.0.0.1:3010", f"127.0.0.1:{port}").replace("/tmp/", f"{tmp}/")
    for shown in sorted(ids, key=len, reverse=True):
        text = text.replace(shown, ids[shown])
    return text


def _is_serve_block(block: Block) -> bool:
    return [c.text for c in block.commands] == ["vttrelay serve"]


def _check_serve(block: Block, relay: Relay, log: Path, port: int, tmp: Path) -> None:
    """What the README shows `vttrelay serve` print: its stdout lines, and its log lines in the
    log."""
    shown = [_substitute(line, port, tmp, {}) for line in block.commands[0].output]
    said = [line for line in shown if not LOG_LINE.match(line)]
    logged = [line for line in shown if LOG_LINE.match(line)]
    assert not matches(said, relay.said), (block.line, matches(said, relay.said))
    messages = [line.split(" ", 2)[2] for line in logged]  # the README's, without their time
    deadline = time.monotonic() + 20  # the world connects
    while True:
        written = [x.split(" ", 2)[-1] for x in log.read_text().splitlines()]
        missing = [m for m in messages if matches([m], written)]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not missing, (missing, written)


def _blocks() -> list[Block]:
    return shell_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_marks_only_what_cannot_run_here() -> None:
    """The blocks not run, each with its reason (the report lists them)."""
    skipped = {b.line: b.marker for b in _blocks() if b.marker.startswith("not run:")}
    for line, marker in skipped.items():
        assert len(marker) > len("not run: ") + 10, (line, marker)
    run = [b for b in _blocks() if not b.marker.startswith("not run:")]
    assert len(run) >= 2 * len(skipped), skipped


@pytest.fixture
def readme_dir(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    yield _workdir(tmp_path / "readme"), free_port()


def test_every_readme_command_runs(readme_dir: tuple[Path, int], tmp_path: Path) -> None:
    cwd, port = readme_dir
    env = _environment(cwd, port)
    log = tmp_path / "relay.log"
    relay: Relay | None = None
    relay_args, served = "", False
    ran = 0
    try:
        for block in _blocks():
            if block.marker.startswith("not run:"):
                continue
            if _is_serve_block(block):  # the README's own start (first one), then a restart
                if relay is not None:
                    relay.stop()
                relay, served = Relay(cwd, env, log), True
                _check_serve(block, relay, log, port, tmp_path)
                ran += 1
                continue
            assert served, f"line {block.line}: a block before the relay is served"
            if block.marker == "relay stopped":  # it changes the world: refused while served
                if relay is not None:
                    relay.stop()
                relay = None
            else:
                wanted = (
                    block.marker.removeprefix("relay:").strip()
                    if block.marker.startswith("relay:")
                    else ""
                )
                if relay is None or wanted != relay_args:  # the same data dir, these options
                    if relay is not None:
                        relay.stop()
                    relay, relay_args = Relay(cwd, env, log, wanted), wanted
            where = cwd
            if block.marker == "own data dir":
                where = _workdir(tmp_path / f"own-{block.line}")
            key = (cwd / "data" / "demo-key").read_text().strip()
            shell = Shell(where, {**env, "KEY": key})
            ids: dict[str, str] = {}
            try:
                for command in block.commands:
                    text = _substitute(command.text, port, tmp_path, ids)
                    shown = [_substitute(x, port, tmp_path, ids) for x in command.output]
                    stops = re.fullmatch(r"stops after (\d+) s", block.marker)
                    if stops:
                        code, printed = shell.run(text + " &")
                        printed += shell.more(float(stops.group(1)))
                        assert printed, f"line {block.line}: {text!r} printed nothing"
                        assert not any('"error"' in p for p in printed), printed
                    else:
                        code, printed = shell.run(text)
                        if text.rstrip().endswith("&") and shown:  # its output comes later
                            deadline = time.monotonic() + 30
                            while matches(shown, printed) and time.monotonic() < deadline:
                                printed += shell.more(0.5)
                    assert code == 0, f"line {block.line}: {text!r} exited {code}: {printed}"
                    problem = matches(shown, printed)
                    assert not problem, f"line {block.line}: {text!r}: {problem}"
                    ids.update(learned_ids(shown, printed))
                    ran += 1
            finally:
                shell.close()
    finally:
        if relay is not None:
            relay.stop()
    assert ran >= 30, ran
