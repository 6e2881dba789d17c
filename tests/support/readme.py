"""The README's shell commands, as `tests/e2e/readme` runs them.

- `shell_blocks(text)`: every ```bash, ```sh and ```console block with its line, its commands
  (a console block's `$ ` lines, continuation lines included; every line of a bash block) and,
  per command, the output the README shows after it, and the block's marker: an HTML comment
  `<!-- readme-test: ... -->` on the line before it (`not run: WHY`, `relay: ARGS`, `relay
  stopped`, `own data dir`, `stops after N s`).
- `matches(expected, actual)`: whether what a command printed has the shape the README shows: a
  JSON line the same top-level keys and the same `type`, `error`, `success` and `status` (and
  the HTTP code curl's `-w` appends); a text line is a pattern in which ids, hex, dates and
  numbers stand for any such word and `...` for anything, matched by the printed lines in order.
- `learned_ids(expected, actual)`: the ids the README shows mapped to the ones the run printed
  (JSON values, and words at the same place of a line), to put into the next commands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MARKER = re.compile(r"<!-- readme-test: (.*?) -->")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
SHELLS = ("bash", "sh", "console")
# A word that is an id, a secret, a date or a number (a Foundry id: 16 letters and digits): any
# such word stands for it
VARIABLE_WORD = re.compile(
    r"(?:[a-z]+_[0-9a-f]{6,}|[0-9a-f]{16,}|[A-Za-z0-9]{16}|[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|[A-Z0-9]{6,8}"
    r"|\d{4}-\d\d-\d\dT[\d:.]+Z?)"
)
STABLE_KEYS = ("type", "error", "success", "status")
ID_VALUE = re.compile(r"^[A-Za-z0-9_.-]{6,}$")


@dataclass
class Command:
    text: str  # as it is run (continuation lines joined by bash itself)
    output: list[str] = field(default_factory=list)  # what the README shows after it


@dataclass
class Block:
    line: int  # where its fence is in the README
    lang: str
    commands: list[Command]
    marker: str  # "" or the marker's text


def shell_blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        indent, lang = fence.group(1), fence.group(2)
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
        if lang in SHELLS:
            before = lines[index - 1] if index else ""
            marker = MARKER.search(before)
            blocks.append(
                Block(
                    index + 1,
                    lang,
                    _console(body) if lang == "console" else _script(body),
                    marker.group(1) if marker else "",
                )
            )
        index = end + 1
    return blocks


def _script(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    pending = ""
    for line in body:
        pending += line + "\n"
        if not line.endswith("\\"):
            if pending.strip():
                commands.append(Command(pending.rstrip("\n")))
            pending = ""
    return commands


def _console(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    continued = False
    for line in body:
        if continued:
            commands[-1].text += "\n" + line
        elif line.startswith("$ "):
            commands.append(Command(line[2:]))
        elif commands:
            commands[-1].output.append(line)
        continued = (line.startswith("$ ") or continued) and line.endswith("\\")
    return commands


def _json(line: str) -> tuple[Any, str] | None:
    """A JSON object line and what follows it (curl's `-w ' %{http_code}'`), or None."""
    if not line.startswith("{"):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(line)
    except ValueError:
        return None
    return value, line[end:].strip()


def _pattern(line: str) -> re.Pattern[str]:
    parts = []
    for word in line.split():
        if "..." in word:
            parts.append(".*".join(_word(w) for w in word.split("...")))
        else:
            parts.append(_word(word))
    return re.compile(r"\s*" + r"\s+".join(parts) + r"\s*")


def _word(word: str) -> str:
    out, last = [], 0
    for found in VARIABLE_WORD.finditer(word):
        out += [re.escape(word[last : found.start()]), r"\S+?"]
        last = found.end()
    out.append(re.escape(word[last:]))
    return "".join(out)


def paired(expected: list[str], actual: list[str]) -> list[tuple[str, str]] | str:
    """Each line the README shows with the printed line that has its shape (in order), or why
    there is none (see the module docstring)."""
    printed = [a for a in actual if a.strip()]
    objects = [_json(a) for a in printed]
    pairs: list[tuple[str, str]] = []
    at = 0
    for line in expected:
        if not line.strip() or line.strip() == "...":
            continue
        want = _json(line)
        while at < len(printed):
            got = objects[at]
            at += 1
            if want is not None and got is not None and _same_json(want, got):
                break
            if want is None and _pattern(line).fullmatch(printed[at - 1]):
                break
        else:
            return f"no printed line like {line!r} in {printed!r}"
        pairs.append((line, printed[at - 1]))
    return pairs


def matches(expected: list[str], actual: list[str]) -> str:
    """The empty text when `actual` has the shape of `expected`, else why not."""
    pairs = paired(expected, actual)
    return pairs if isinstance(pairs, str) else ""


def _same_json(want: tuple[Any, str], got: tuple[Any, str]) -> bool:
    (expected, expected_tail), (actual, actual_tail) = want, got
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return bool(expected == actual)
    if set(expected) != set(actual) or expected_tail != actual_tail:
        return False
    return all(expected.get(k) == actual.get(k) for k in STABLE_KEYS)


def learned_ids(expected: list[str], actual: list[str]) -> dict[str, str]:
    """Ids the README shows (in a JSON value, or a word at the same place of a line) mapped to
    the ones the run printed there, in the printed line that has the shown line's shape."""
    found: dict[str, str] = {}
    pairs = paired(expected, actual)
    for want, got in [] if isinstance(pairs, str) else pairs:
        want_json, got_json = _json(want), _json(got)
        if want_json is not None and got_json is not None:
            _walk(want_json[0], got_json[0], found)
            continue
        for a, b in zip(want.split(), got.split(), strict=False):
            if a != b and len(a) == len(b) and _same_kind(a, b):
                found[a] = b
    return found


def _same_kind(a: str, b: str) -> bool:
    """Two words that are ids of one kind: same prefix (`key_`, `fvtt_`), both id-like."""
    if not (ID_VALUE.match(a) and ID_VALUE.match(b) and VARIABLE_WORD.fullmatch(a)):
        return False
    prefix = re.match(r"[a-z]+_", a)
    return prefix is None or b.startswith(prefix.group(0))


def _walk(want: Any, got: Any, found: dict[str, str]) -> None:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want.keys() & got.keys():
            _walk(want[key], got[key], found)
    elif isinstance(want, list) and isinstance(got, list):
        for a, b in zip(want, got, strict=False):
            _walk(a, b, found)
    elif (
        isinstance(want, str)
        and isinstance(got, str)
        and want != got
        and ID_VALUE.match(want)
        and "..." not in want
    ):
        found[want] = got
