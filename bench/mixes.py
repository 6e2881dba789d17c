"""The request mixes of the scenarios (data), written to the request files the loaders read.

A request file has one request per line: `METHOD<TAB>PATH<TAB>BODY`; both wrk (`mix.lua`) and the
Python loader (`pyload.py`) read it, so the same requests are measured either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, urlencode

import orjson

from bench.replies import ACTOR, GET_UUID, SEARCH_FILTER

Request = tuple[str, str, dict[str, Any] | None]  # method, path with query, JSON body

DETAILS: Final = '["resources","items","features","spells"]'
ACTOR_DETAILS_QUERY: Final = urlencode({"actorUuid": ACTOR, "details": DETAILS})

# Scenario 1: the forwarded mix of issue 6 (plus /roll, /get and /search, issue 10), one of each.
FORWARDED: Final[tuple[Request, ...]] = (
    ("GET", "/dnd5e/get-actor-details?" + ACTOR_DETAILS_QUERY, None),
    ("POST", "/dnd5e/skill-check", {"actorUuid": ACTOR, "skill": "prc"}),
    ("GET", "/chat?limit=10", None),
    ("POST", "/chat", {"content": "Hello from the bench", "flavor": "bench"}),
    ("GET", "/players", None),
    ("POST", "/roll", {"formula": "2d20kh", "flavor": "Test Roll", "createChatMessage": True}),
    ("GET", "/get?" + urlencode({"uuid": GET_UUID}), None),
    ("GET", "/search?" + urlencode({"filter": SEARCH_FILTER}), None),
)

# Scenario 2: the floor, no world hop.
HEALTH: Final[tuple[Request, ...]] = (("GET", "/api/health", None),)


def with_client(path: str, client_id: str) -> str:
    """`path` with `clientId=<client_id>` added to its query."""
    sep = "&" if "?" in path else "?"
    return f"{path}{sep}clientId={quote(client_id, safe='')}"


def spread(mix: Sequence[Request], client_ids: Sequence[str]) -> list[Request]:
    """The mix over many worlds: every (world, action) pair once; consecutive requests go to
    different worlds. Request i goes to world i mod n with action (i mod n + i div n) mod
    len(mix): each world takes every action once, whatever the two lengths."""
    n, k = len(client_ids), len(mix)
    out: list[Request] = []
    for i in range(n * k):
        method, path, body = mix[(i % n + i // n) % k]
        out.append((method, with_client(path, client_ids[i % n]), body))
    return out


def for_world(mix: Sequence[Request], client_id: str | None) -> list[Request]:
    """The mix aimed at one world (or at no world in particular)."""
    if client_id is None:
        return list(mix)
    return [(m, with_client(p, client_id), b) for m, p, b in mix]


def encode(requests: Iterable[Request]) -> str:
    """The request-file text."""
    lines = []
    for method, path, body in requests:
        text = orjson.dumps(body).decode() if body is not None else ""
        if "\t" in path or "\n" in path or "\n" in text:
            raise ValueError(f"request does not fit on one line: {method} {path}")
        lines.append(f"{method}\t{path}\t{text}")
    return "\n".join(lines) + "\n"


def decode(text: str) -> list[Request]:
    """Parse a request file back into requests."""
    out: list[Request] = []
    for line in text.splitlines():
        if not line:
            continue
        method, path, body = (line.split("\t") + ["", ""])[:3]
        out.append((method, path, orjson.loads(body) if body else None))
    return out


def write(path: Path, requests: Iterable[Request]) -> Path:
    path.write_text(encode(requests))
    return path
