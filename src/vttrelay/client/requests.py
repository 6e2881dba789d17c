"""Turn a call by route into an HTTP request: where each parameter goes, from the route table.

The relay's route table says, for every endpoint, which parameters it takes and where it reads
each one (body, query or path). The client carries a generated copy of it (`groups/`), so a
call like `client.call("skill-check", actorUuid=..., skill="prc")` puts every value where the
relay looks for it first. This module is pure: no I/O, shared by the sync and async clients.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from vttrelay.client.groups import ROUTES
from vttrelay.client.spec import RouteSpec

_BY_NAME: dict[str, RouteSpec] = {}
for _route in ROUTES:
    _BY_NAME.setdefault(_route.key, _route)
    if _route.action:
        _BY_NAME.setdefault(_route.action, _route)
    _BY_NAME.setdefault(_route.path.removeprefix("/"), _route)  # e.g. "dnd5e/skill-check"


class UnknownEndpoint(LookupError):
    """The name matches no route of the table."""


@dataclass(frozen=True)
class PreparedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | None


def find_route(name: str) -> RouteSpec:
    """A route by world action (`skill-check`), by path (`dnd5e/skill-check`, `/chat/subscribe`)
    or by `METHOD /path`."""
    route = _BY_NAME.get(name) or _BY_NAME.get(name.removeprefix("/"))
    if route is None:
        raise UnknownEndpoint(f"no endpoint named {name!r}")
    return route


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def prepare(route: RouteSpec, params: Mapping[str, Any]) -> PreparedRequest:
    """Place each given parameter in the first source the route reads it from.

    Unknown parameter names are an error here, not silently dropped as the relay would; None
    values are not sent. GET requests carry no body, so their parameters go to the query.
    """
    declared = {p.name: p for p in route.params}
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise TypeError(f"{route.method} {route.path} takes no parameter(s) {', '.join(unknown)}")
    path = route.path
    query: dict[str, str] = {}
    body: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        sources = declared[name].sources
        if "path" in sources:
            path = path.replace("{" + name + "}", quote(_query_text(value), safe=""))
        elif route.method == "GET" or sources[0] == "query" or "body" not in sources:
            query[name] = _query_text(value)
        else:
            body[name] = value
    missing = [p.name for p in route.params if "path" in p.sources and "{" + p.name + "}" in path]
    if missing:
        raise TypeError(f"{route.method} {route.path} needs {', '.join(missing)}")
    has_body = route.method != "GET" and (body or route.method == "POST")
    return PreparedRequest(route.method, path, query, body if has_body else None)
