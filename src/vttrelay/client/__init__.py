"""The typed Python SDK for a relay: `Client` (sync) and `AsyncClient` (asyncio).

    from vttrelay.client import Client

    with Client("http://127.0.0.1:3010", api_key="...") as relay:
        check = relay.dnd5e.skill_check("Actor.pipMonk000000001", "ste", advantage=True)

One typed method per endpoint, grouped as the API is (`relay.dnd5e`, `relay.chat`,
`relay.entities`, `relay.streams`, ...: one module per group in `groups/`, generated from the
relay's route table by `tools/codegen`); replies are `TypedDict`s (`types.py`, why in its
docstring); refusals raise the `errors.py` hierarchy. Installable alone:
`pip install ./clients/python` (httpx, httpx-sse).
"""

from vttrelay.client.errors import (
    AuthError,
    BadRequest,
    ConnectionFailed,
    NotFound,
    RateLimited,
    Timeout,
    VttRelayError,
    WorldUnavailable,
)
from vttrelay.client.http import AsyncClient, Client
from vttrelay.client.requests import UnknownEndpoint, find_route
from vttrelay.client.types import StreamEvent

RelayError = VttRelayError  # the name before the typed SDK
Event = StreamEvent

__all__ = [
    "AsyncClient",
    "AuthError",
    "BadRequest",
    "Client",
    "ConnectionFailed",
    "Event",
    "NotFound",
    "RateLimited",
    "RelayError",
    "StreamEvent",
    "Timeout",
    "UnknownEndpoint",
    "VttRelayError",
    "WorldUnavailable",
    "find_route",
]
