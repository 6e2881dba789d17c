"""What the route groups share: parameter sources, the parameters most routes take (`clientId`,
`userId`), the forwarded and local route factories and the script patterns the relay refuses.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.relay.routes.model import Param, ParamType, Route, Source

BQ: Final[tuple[Source, ...]] = ("body", "query")
QB: Final[tuple[Source, ...]] = ("query", "body")
Q: Final[tuple[Source, ...]] = ("query",)
B: Final[tuple[Source, ...]] = ("body",)
P: Final[tuple[Source, ...]] = ("path",)

CLIENT_ID = Param("clientId", "string", Q, description="Id of the connected world.")
USER_ID = Param(
    "userId", "string", QB, description="User id or name whose permissions scope the call."
)
USER_ID_QUERY = Param(
    "userId", "string", Q, description="Only deliver what this user (id or name) may see."
)
SELECTED = Param(
    "selected", "boolean", QB, description="Use the selected token's actor instead of actorUuid."
)


def bq(name: str, type_: ParamType | None, required: bool = False, **kw: Any) -> Param:
    """A parameter read from the body first, then the query (the dnd5e style)."""
    return Param(name, type_, kw.pop("sources", BQ), required=required, **kw)


def forward(
    method: str, path: str, action: str, summary: str, group: str, *params: Param, **fields: Any
) -> Route:
    """A route the relay forwards to the world as `action`: the world's `clientId` and the
    acting `userId` first, then the route's own parameters; `fields` are the other Route fields
    (`scope`, `sdk`, ...). The groups' own factories fill in their defaults."""
    return Route(
        method,
        path,
        "forward",
        summary,
        group,
        action=action,
        params=(CLIENT_ID, USER_ID, *params),
        **fields,
    )


def local(method: str, path: str, handler: str, summary: str, group: str, **fields: Any) -> Route:
    """A route the relay answers itself, by the handler named `handler` in `app.py`."""
    return Route(method, path, "local", summary, group, handler=handler, **fields)


# wire-protocol §4.9: the reference relay's pre-check on execute-js scripts.
FORBIDDEN_SCRIPT_PATTERNS: Final = (
    r"localStorage",
    r"sessionStorage",
    r"document\.cookie",
    r"eval\(",
    r"new Worker\(",
    r"new SharedWorker\(",
    r"__proto__",
    r"atob\(",
    r"btoa\(",
    r"crypto\.",
    r"Intl\.",
    r"postMessage\(",
    r"XMLHttpRequest",
    r"importScripts\(",
    r"apiKey",
    r"privateKey",
    r"password",
    r"Function\(",
    r"Function\.constructor",
    r"globalThis",
    r"game\.settings\.set",
    r"Reflect\.",
    r"Proxy",
    r"import\(",
)
