"""The pytest plugin `vttrelay.testing`, as a CI developer uses it: a user's test files run in a
pytest of their own (pytest's `pytester`, in a subprocess) against the `vttrelay` fixture: a real
relay and world over real sockets, the world fresh for each test, the rolls fixed by the seed;
a run that uses none of its fixtures loads none of the relay."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "test_goblin_fight.py"
DOC = ROOT / "docs" / "testing.md"


def plugin_args() -> tuple[str, ...]:
    """How the inner pytest gets the plugin: by its pytest11 entry point, as an installed vttrelay
    gives it; named with `-p` only where this checkout's install predates the entry point."""
    installed = any(ep.value == "vttrelay.testing" for ep in entry_points(group="pytest11"))
    return ("-p", "no:cacheprovider") + (() if installed else ("-p", "vttrelay.testing"))


def install_vttrelay(dest: Path) -> Path:
    """vttrelay installed (built as a wheel, no dependencies) into `dest/site` from a copy of
    the working tree (a build writes beside its sources, and the tree must stay clean)."""
    tree = dest / "vttrelay"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    site = dest / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
        + [str(tree)],
        check=True,
        timeout=600,
        capture_output=True,
    )
    return site


def test_an_installed_vttrelay_brings_the_plugin_and_the_documented_example_passes(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    site = install_vttrelay(tmp_path)
    [dist] = site.glob("vttrelay-*.dist-info")
    assert "[pytest11]\nvttrelay = vttrelay.testing\n" in (dist / "entry_points.txt").read_text()
    pytester.makepyfile(test_goblin_fight=EXAMPLE.read_text())
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", str(site))  # this installed copy, not the working tree
        env.delenv("VTTRELAY_SEED", raising=False)
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--vttrelay-seed", "7", "-v"
        )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["plugins: vttrelay-*", "*vttrelay: world seed 7 (repeat these rolls with *7)"]
    )
    assert (
        f"{site}/vttrelay/testing"
        in subprocess.run(
            [sys.executable, "-c", "import vttrelay.testing as t; print(t.__file__)"],
            env={**os.environ, "PYTHONPATH": str(site)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    doc = DOC.read_text()
    assert EXAMPLE.read_text() in doc  # the file the docs show is the one run here
    for line in result.stdout.lines:
        if "::test_" in line:  # the docs show this run's verdicts
            assert line.split(" [")[0].strip() in doc


USER_TESTS = """
import asyncio
import json
import os
from pathlib import Path

import pytest

from vttrelay.testing import VttRelay

OUT = Path(os.environ["ROLLS_OUT"])


def record(name, reply):
    with OUT.open("a") as out:
        out.write(json.dumps({"test": name, "reply": reply}) + "\\n")


def test_first(vttrelay: VttRelay) -> None:
    with vttrelay.client() as relay:
        record("first", relay.rolls.roll("3d6", create_chat_message=True))
        relay.entities.create("Actor", data={"name": "Left Behind", "type": "npc"})


def test_second(vttrelay: VttRelay) -> None:
    with vttrelay.client() as relay:
        record("second", relay.rolls.roll("3d6", create_chat_message=True))
        found = relay.search.find(query="Left Behind", filter="Actor")
        assert found["results"] == []  # the actor of the test before is gone


@pytest.mark.asyncio
async def test_async(vttrelay: VttRelay) -> None:
    async with vttrelay.async_client() as relay:
        record("async", await relay.rolls.roll("3d6", create_chat_message=True))


def test_session_keeps_what_tests_did(vttrelay_session: VttRelay) -> None:
    assert vttrelay_session.client_id == "vttrelay-demo"
    with vttrelay_session.client() as relay:
        record("session", relay.rolls.roll("3d6"))
"""


def run_user_tests(pytester: pytest.Pytester, out: Path, *args: str) -> list[dict[str, object]]:
    pytester.makepyfile(test_user=USER_TESTS)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ROLLS_OUT", str(out))
        env.delenv("VTTRELAY_SEED", raising=False)
        result = pytester.runpytest_subprocess(*plugin_args(), "-p", "no:randomly", *args)
    result.assert_outcomes(passed=4)
    assert "vttrelay: world seed" in result.stdout.str()
    lines = [orjson.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    seed = re.search(r"vttrelay: world seed (\d+)", result.stdout.str())
    assert seed is not None
    return [*lines, {"seed": int(seed.group(1))}]


def test_each_test_gets_the_fresh_world_and_one_seed_repeats_a_run(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    out = tmp_path / "rolls.jsonl"
    first = run_user_tests(pytester, out)  # no seed given: one is drawn and reported
    seed = first[-1]["seed"]
    replies = {line["test"]: line["reply"] for line in first[:-1]}
    # reset before each test: the same world, dice, clock and request ids in every test
    assert replies["first"] == replies["second"] == replies["async"]
    assert replies["first"]["requestId"] == "roll_1_s" + str(seed)  # type: ignore[index]
    # the session fixture is not reset: its relay went on from where the async test left it
    assert replies["session"] != replies["first"]

    again = run_user_tests(pytester, out, "--vttrelay-seed", str(seed))
    assert again == first  # the same seed: the same bytes, run after run
    other = run_user_tests(pytester, out, "--vttrelay-seed", str(int(str(seed)) + 1))
    assert other[0]["reply"] != first[0]["reply"]


def test_a_bad_seed_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="def test_x(vttrelay):\n    pass\n")
    result = pytester.runpytest_subprocess(*plugin_args(), "--vttrelay-seed", "lots")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*vttrelay: a seed is a whole number from 0 to * 'lots'*"])


def test_a_run_without_its_fixtures_loads_nothing_of_the_relay(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import sys

def pytest_sessionfinish(session):
    loaded = sorted(m for m in sys.modules if m.startswith("vttrelay"))
    print("VTTRELAY MODULES", ",".join(loaded))
"""
    )
    pytester.makepyfile(test_other="def test_unrelated():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess(*plugin_args(), "-s")
    result.assert_outcomes(passed=1)
    [line] = [ln for ln in result.stdout.lines if "VTTRELAY MODULES" in ln]
    assert line.split()[-1] == "vttrelay,vttrelay.testing,vttrelay.testing.handle"
    assert "vttrelay: world seed" not in result.stdout.str()  # no relay, nothing to report
