"""A Python client for the relay API: `Client` (sync) and `AsyncClient` (asyncio)."""

from vttrelay.client.http import AsyncClient, Client, Event, RelayError
from vttrelay.client.requests import UnknownEndpoint, find_route

__all__ = ["AsyncClient", "Client", "Event", "RelayError", "UnknownEndpoint", "find_route"]
