"""No `asyncio.wait_for` in `vttrelay`: on Python 3.11 it loses a cancellation that arrives as
the awaited thing completes (it returns the result instead of raising CancelledError; fixed in
3.12). The script sandbox met it: a request cancelled while its script's engine started kept
running the script (`tests/unit/world/scripts/test_sandbox.py::
test_cancelling_the_caller_stops_the_script` failed now and then). `async with
asyncio.timeout(...)` (or `timeout_at`) keeps the cancellation; the code uses it instead."""

from __future__ import annotations

import ast
from pathlib import Path

import vttrelay

SRC = Path(vttrelay.__file__).parent


def wait_for_uses(tree: ast.AST) -> list[int]:
    """The lines of a module that name `asyncio.wait_for` (called, imported or passed on)."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "wait_for"
            and isinstance(node.value, ast.Name)
            and node.value.id == "asyncio"
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "asyncio":
            lines += [node.lineno for alias in node.names if alias.name == "wait_for"]
    return lines


def test_the_check_finds_each_way_of_naming_it() -> None:
    code = "import asyncio\nfrom asyncio import wait_for\nasync def f(x):\n"
    code += "    await asyncio.wait_for(x, 1)\n    g = asyncio.wait_for\n"
    assert sorted(wait_for_uses(ast.parse(code))) == [2, 4, 5]
    assert wait_for_uses(ast.parse("async def f(e):\n    await e.wait_for(1)\n")) == []


def test_no_module_of_vttrelay_uses_asyncio_wait_for() -> None:
    found = {
        str(path.relative_to(SRC.parent)): uses
        for path in sorted(SRC.rglob("*.py"))
        if (uses := wait_for_uses(ast.parse(path.read_text(), str(path))))
    }
    assert found == {}, "use `async with asyncio.timeout(...)` instead (see the docstring)"
