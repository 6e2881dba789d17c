"""What a route table entry is: `Route`, its `Param`s and `Guard`s, how the SDK names it (`Sdk`,
`NoSdk`), a `Group` of routes, and the limits every parameter has by default. Types only.

Sources follow wire-protocol §4.2: each parameter lists where it may come from, in order; the
first source with a non-null, non-empty value wins. GET bodies are never read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

# "integer": a number the world reads as an integer (a count, an index, an enum such as a chat
# type). The relay checks it as a number, as the reference relay does (the world truncates a
# fraction, as the module's parseInt does); OpenAPI and the SDK say integer.
ParamType = Literal["string", "number", "integer", "boolean", "array", "object"]
Source = Literal["body", "query", "path"]
Mode = Literal["forward", "stream", "local"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()

DEFAULT_TIMEOUT: Final = 10.0
SCRIPT_TIMEOUT: Final = 20.0
USE_TIMEOUT: Final = 30.0

# Limits every parameter has unless its entry declares its own (README "Limits"). The relay
# refuses a value past them before anything reaches the world: sizes with 413, ranges and nesting
# with 400, each as `{"error": "'<name>' ..."}` (params.py).
MAX_SAFE_INTEGER: Final = 2**53 - 1  # the largest integer a JavaScript number holds exactly
DEFAULT_MAX_LENGTH: Final = 65_536  # characters of a string value
DEFAULT_MAX_BYTES: Final = 4 * 1024 * 1024  # JSON bytes of an array, object or untyped value
DEFAULT_MAX_DEPTH: Final = 32  # nesting of arrays and objects (a real actor nests about 8)


@dataclass(frozen=True)
class Param:
    """One declared parameter of a route."""

    name: str
    type: ParamType | None  # None: untyped, passed through as given
    sources: tuple[Source, ...]
    required: bool = False
    default: Any = MISSING  # applied by the relay when the caller gave nothing
    description: str = ""
    # Constraints (declarative; params.py enforces them, openapi.py shows them):
    minimum: float = -MAX_SAFE_INTEGER  # numbers and integers
    maximum: float = MAX_SAFE_INTEGER  # numbers and integers
    max_length: int = DEFAULT_MAX_LENGTH  # strings (and untyped values given as strings)
    max_bytes: int = DEFAULT_MAX_BYTES  # arrays, objects, untyped non-strings: JSON size
    max_depth: int = DEFAULT_MAX_DEPTH  # arrays, objects, untyped: nesting levels
    # Other names a client may use for this parameter; the world always gets `name` (DESIGN §6
    # item 9: the reference relay and the module disagree on some names).
    aliases: tuple[str, ...] = ()
    # The SDK's Python type where it is narrower than `type` says (names of
    # `vttrelay.client.types`, e.g. `Skill`, `Sequence[str]`); None: the type's default.
    sdk_type: str | None = None


@dataclass(frozen=True)
class Guard:
    """A relay-side check for calls whose parameter `param` equals `value` (endpoints-beyond-seed
    §1.3: a /create of a Macro): the key must hold `scope` (else 400 `scope_error`), and the
    script at the dotted path `script` of the parameters must not match the route's
    `forbidden_patterns` (else 400 `Script contains forbidden patterns`)."""

    param: str
    value: Any
    scope: str | None = None
    scope_error: str = ""
    script: str | None = None


@dataclass(frozen=True)
class Sdk:
    """How the Python SDK calls a route (tools/codegen writes the method): the method's name
    under its group (`relay.chat.send`) and its reply type, written with the names of
    `vttrelay.client.types` (`Envelope[ChatPage]`; `bytes` for a binary reply; for a stream, the
    type of its events' data)."""

    method: str
    reply: str


@dataclass(frozen=True)
class NoSdk:
    """A route the SDK has no method for, and why (an HTML page, a duplicate, ...)."""

    reason: str


@dataclass(frozen=True)
class Route:
    """One endpoint. `mode` says who answers it:

    - `forward`: the world, through `action`; the reply is returned byte for byte.
    - `stream`: a Server-Sent Events stream of the world's events on `channel`.
    - `local`: the relay itself, by the handler named `handler` in `app.py`.
    """

    method: str
    path: str
    mode: Mode
    summary: str
    group: str
    scope: str | None = None  # None: public, no API key needed (unless `keyed`)
    keyed: bool = False  # a valid API key is needed even without a scope (GET /api/key)
    params: tuple[Param, ...] = ()
    action: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    system: str | None = None  # the world's system id this route needs (e.g. "dnd5e")
    channel: str | None = None
    handler: str | None = None
    require_any: tuple[str, ...] = ()  # at least one of these parameters must be given
    require_any_error: str = ""  # the error text when none is (default: "At least one of ...")
    # The `documentType` values the route accepts, each with the `className` the relay adds to
    # the frame (the canvas routes); any other value is refused (params.validate).
    document_types: dict[str, str] | None = None
    forbidden_patterns: tuple[str, ...] = ()  # regexes a `script` parameter must not match
    guards: tuple[Guard, ...] = ()  # checks for calls with a given parameter value
    extra: dict[str, Any] = field(default_factory=dict)
    # The SDK's method for it, or why there is none (every route says one or the other).
    sdk: Sdk | NoSdk | None = None


@dataclass(frozen=True)
class Group:
    """One API group: its name (the OpenAPI tag, `Route.group` of its routes), the attribute
    the SDK hangs its methods on (`relay.dnd5e`) and its routes in table order."""

    name: str
    sdk: str
    routes: tuple[Route, ...]
