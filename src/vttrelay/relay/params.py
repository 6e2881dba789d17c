"""Parameter extraction and coercion for forward routes, with the exact error messages.

Pure functions over plain mappings (wire-protocol §4.2): each declared parameter is read from its
sources in order (body, query, path); the first non-null value wins (an empty query value counts
as absent); values are coerced to the declared type; undeclared parameters are dropped; GET
bodies are never read; defaults from the route table are applied (DESIGN §6 item 6).

Each value is then held to its parameter's declared limits (routes.Param: number range, string
length, JSON size, nesting depth), so nothing the world could not store or answer reaches it:
sizes give 413, the rest 400, always `{"error": "'<name>' ..."}` (README "Limits"). The checks are
iterative, so a value nested as deep as the JSON parser allows is refused, not a RecursionError.

The same limits bound a route's whole body (`body_limit`): what its body parameters can need at
most, so that a body far past it is refused (413) before it is read and parsed; the relay's
global body limit stays the ceiling, reached only by routes whose parameters need it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

import orjson

from vttrelay.relay.routes import MISSING, ROUTES, Param, Route

FORBIDDEN_SCRIPT = "Script contains forbidden patterns"
BODY_SLACK: Final = 1024 * 1024  # key names, whitespace and undeclared keys around the values
ESCAPED_CHAR: Final = 6  # bytes of one character in JSON text at worst (`\u00e9`)
SCALAR_BYTES: Final = 32  # a number, boolean or null
# A decimal number as the reference relay's parser accepts it: no spaces, no `_`, no hex.
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class ParamError(Exception):
    """A refused parameter: HTTP `status` (400, or 413 for a value over its size limit) with
    body `{"error": message, **extra}`; /ws/api sends the same message and status in an error
    frame."""

    def __init__(self, message: str, status: int = 400, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.extra = extra


def parse_body(method: str, raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object; {} for GET, empty, unparseable or non-object bodies."""
    if method == "GET" or not raw:
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}


def _number(name: str, value: Any) -> int | float:
    if isinstance(value, bool):
        raise ParamError(f"'{name}' must be a valid number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        number = value
    elif isinstance(value, str) and _DECIMAL.fullmatch(value):
        number = float(value)
    else:
        raise ParamError(f"'{name}' must be a valid number")
    if not math.isfinite(number):
        raise ParamError(f"'{name}' must be a valid number")
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def coerce(param: Param, value: Any, from_query: bool) -> Any:
    """Coerce one value to the parameter's declared type, or raise ParamError."""
    name = param.name
    kind = param.type
    if kind is None:
        return value
    if kind == "string":
        if isinstance(value, str):
            return value
        raise ParamError(f"'{name}' must be a string")
    if kind in ("number", "integer"):
        return _number(name, value)
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ParamError(f"'{name}' must be a valid boolean")
    if kind == "array":
        if isinstance(value, list):
            return value
        if isinstance(value, str):
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise ParamError(f"'{name}' must be a valid array") from None
            if isinstance(parsed, list):
                return parsed
            raise ParamError(f"'{name}' must be a valid array")
        raise ParamError(f"'{name}' must be an array")
    # object
    if isinstance(value, dict):
        return value
    raise ParamError(f"'{name}' must be an object")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _too_deep(value: Any, limit: int) -> bool:
    """True if `value` nests arrays/objects more than `limit` levels (a scalar is level 0)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        depth += 1
        if depth > limit:
            return True
        stack.extend((c, depth) for c in children if isinstance(c, dict | list))
    return False


def check_limits(param: Param, value: Any) -> None:
    """Hold a coerced value to its parameter's declared limits, or raise ParamError."""
    name = param.name
    if isinstance(value, str):
        if len(value) > param.max_length:
            raise ParamError(
                f"'{name}' is too long (at most {_plural(param.max_length, 'character')})", 413
            )
    elif isinstance(value, dict | list):
        if _too_deep(value, param.max_depth):
            raise ParamError(
                f"'{name}' is nested too deeply (at most {_plural(param.max_depth, 'level')})"
            )
        if len(orjson.dumps(value)) > param.max_bytes:
            raise ParamError(
                f"'{name}' is too large (at most {param.max_bytes} bytes of JSON)", 413
            )
    elif (
        param.type in ("number", "integer")
        and isinstance(value, int | float)
        and not param.minimum <= value <= param.maximum
    ):
        raise ParamError(
            f"'{name}' must be between {_bound(param.minimum)} and {_bound(param.maximum)}"
        )


def _bound(limit: float) -> str:
    return str(int(limit)) if float(limit).is_integer() else str(limit)


# Where each parameter is looked for, worked out once per route (`_plan`): `extract` runs on
# every forwarded call, and walking the declarations each time (sources, aliases, defaults) was
# half its cost. Measured (bench/RESULTS.md "Issue 15"): the eight routes of the bench mix
# extract in 2.6 us on average instead of 3.9 us.
_BODY, _QUERY, _PATH = 0, 1, 2
_SOURCE_INDEX: Final = {"body": _BODY, "query": _QUERY, "path": _PATH}


class _Plan:
    """A route's parameters as `extract` walks them."""

    __slots__ = ("lookups", "fill")

    def __init__(self, route: Route) -> None:
        # per parameter: the parameter, then (source index, name) in lookup order: each source
        # in its declared order, within a source the name first, then its aliases
        self.lookups = tuple(
            (
                param,
                tuple(
                    (_SOURCE_INDEX[source], name)
                    for source in param.sources
                    for name in (param.name, *param.aliases)
                ),
            )
            for param in route.params
        )
        # the parameters that matter when absent: required ones, and those with a default
        self.fill = tuple(
            (p.name, p.required, p.default)
            for p in route.params
            if p.required or p.default is not MISSING
        )


_PLANS = {id(route): _Plan(route) for route in ROUTES}


def _plan(route: Route) -> _Plan:
    plan = _PLANS.get(id(route))
    return _Plan(route) if plan is None else plan


def extract(
    route: Route,
    query: Mapping[str, str],
    body: Mapping[str, Any],
    path: Mapping[str, str],
) -> dict[str, Any]:
    """The route's declared parameters, coerced, with defaults; raises ParamError.

    The first source with a value wins: a body value that is not null, a query or path value
    that is not empty."""
    plan = _plan(route)
    sources = (body, query, path)
    values: dict[str, Any] = {}
    for param, lookups in plan.lookups:
        for index, name in lookups:
            value = sources[index].get(name)
            if value is not None and (index == _BODY or value != ""):
                if param.type == "string" and value.__class__ is str:
                    if len(value) > param.max_length:
                        check_limits(param, value)  # raises the length error
                else:
                    value = coerce(param, value, index != _BODY)
                    check_limits(param, value)
                values[param.name] = value
                break
    for name, required, default in plan.fill:
        if name not in values:
            if required:
                raise ParamError(f"'{name}' is required")
            values[name] = default
    validate(route, values)
    if route.document_types is not None:
        values["className"] = route.document_types[values["documentType"]]
    return values


def _largest(param: Param) -> int:
    """Bytes of JSON text the parameter's largest accepted value can take."""
    text = param.max_length * ESCAPED_CHAR + 2
    if param.type == "string":
        return text
    if param.type in ("array", "object"):
        return param.max_bytes
    if param.type is None:
        return max(text, param.max_bytes)
    return SCALAR_BYTES


def _body_limit(route: Route) -> int:
    if "max_body" in route.extra:  # a route that reads its body itself names its own limit
        return int(route.extra["max_body"])
    needed = sum(_largest(p) for p in route.params if "body" in p.sources)
    return 2 * needed + BODY_SLACK


# Computed once for the route table (its routes live as long as the process, so their ids are
# never reused); another Route (a test's) is computed each time.
_BODY_LIMITS = {id(route): _body_limit(route) for route in ROUTES}


def body_limit(route: Route) -> int:
    """The largest body the route's body parameters can need: each at its limit, twice over for
    pretty-printed JSON, plus BODY_SLACK."""
    limit = _BODY_LIMITS.get(id(route))
    return _body_limit(route) if limit is None else limit


def require_any_message(names: tuple[str, ...]) -> str:
    """`At least one of 'a', 'b', or 'c' is required`."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} or {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + ", or " + quoted[-1]
    return f"At least one of {listed} is required"


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def check_guards(route: Route, values: Mapping[str, Any], scopes: Sequence[str]) -> None:
    """The route's `guards` for a call by a key with `scopes` (after `extract`)."""
    for guard in route.guards:
        if values.get(guard.param) != guard.value:
            continue
        if guard.scope is not None and guard.scope not in scopes:
            raise ParamError(guard.scope_error)
        if guard.script is not None and route.forbidden_patterns:
            script: Any = values
            for part in guard.script.split("."):
                script = script.get(part) if isinstance(script, Mapping) else None
            if isinstance(script, str) and _compiled(route.forbidden_patterns).search(script):
                raise ParamError(FORBIDDEN_SCRIPT)


def validate(route: Route, values: Mapping[str, Any]) -> None:
    """Route-specific checks of the table: `require_any`, `document_types` and
    `forbidden_patterns`."""
    if route.require_any and not any(n in values for n in route.require_any):
        raise ParamError(route.require_any_error or require_any_message(route.require_any))
    if route.document_types is not None and values.get("documentType") not in (
        route.document_types
    ):
        valid = list(route.document_types)
        raise ParamError(
            f"Invalid documentType. Must be one of: {', '.join(valid)}", validTypes=valid
        )
    if route.forbidden_patterns:
        script = values.get("script")
        if (
            isinstance(script, str)
            and script
            and _compiled(route.forbidden_patterns).search(script)
        ):
            raise ParamError(FORBIDDEN_SCRIPT)
