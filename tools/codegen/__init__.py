"""The SDK generator: `python -m tools.codegen` rewrites the files generated from the relay's
route table (`vttrelay.relay.routes`), and removes generated files no group needs any more:

- `src/vttrelay/client/groups/<group>.py`, one module per API group, and its `__init__.py`
  (`sdk.py`): the client carries these, so the installed client never imports the relay;
- `docs/sdk-reference.md`, the method reference (`reference.py`).

Run it after adding or changing a route or a group; `tests/unit/client/test_codegen.py` fails
while a committed file differs from what this writes. A development tool: it lives outside the
shipped packages and imports the relay, which the client must not.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from tools.codegen import reference, sdk
from vttrelay.relay import routes

ROOT: Final = Path(__file__).resolve().parents[2]
GROUPS_DIR: Final = ROOT / "src" / "vttrelay" / "client" / "groups"
REFERENCE: Final = ROOT / "docs" / "sdk-reference.md"


def format_source(source: str, path: Path) -> str:
    """The source of `path` as `ruff` fixes and formats it there (imports sorted, unused ones
    dropped), so the files read well, pass `ruff check` and diffs stay small."""
    for command in (
        ["check", "--fix-only", "--select", "I,F401"],
        ["format", "--line-length", "100"],
    ):
        source = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", str(path), "-"],
            input=source,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return source


def _source_of(group: routes.Group) -> str:
    """The route table module that defines `group`, as a repository path."""
    for info in pkgutil.iter_modules(routes.__path__):
        module = sys.modules.get(f"{routes.__name__}.{info.name}")
        if module is not None and getattr(module, "GROUP", None) is group:
            return f"src/vttrelay/relay/routes/{info.name}.py"
    raise SystemExit(f"no module of vttrelay.relay.routes defines the group {group.name}")


def generated() -> dict[Path, str]:
    """Every generated file as it should be, from the current route table."""
    groups = [g for g in routes.GROUPS if sdk.sdk_routes(g)]
    sources = {GROUPS_DIR / f"{g.sdk}.py": sdk.render_group(g, _source_of(g)) for g in groups}
    sources[GROUPS_DIR / "__init__.py"] = sdk.render_package(
        groups, "src/vttrelay/relay/routes/__init__.py"
    )
    files = {path: format_source(text, path) for path, text in sources.items()}
    files[REFERENCE] = reference.render_reference(routes.GROUPS)
    return files


def stale(files: dict[Path, str]) -> list[Path]:
    """Generated files of groups that no longer exist."""
    return sorted(p for p in GROUPS_DIR.glob("*.py") if p not in files)


def main() -> None:
    files = generated()
    GROUPS_DIR.mkdir(exist_ok=True)
    for path, text in files.items():
        name = path.relative_to(ROOT)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {name}")
        else:
            print(f"{name} is up to date")
    for path in stale(files):
        path.unlink()
        print(f"removed {path.relative_to(ROOT)}")
