"""What the pytest plugin's fixtures hand a test: the running relay and its world (`VttRelay`).

Light on purpose: importing it loads neither the relay nor the client; `client()` and
`async_client()` import the SDK when a test calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vttrelay.client import AsyncClient, Client


class Resets(Protocol):
    """What puts the world back (`harness.Harness`)."""

    def reset(self) -> None: ...


@dataclass(frozen=True)
class VttRelay:
    """A relay with a fresh embedded demo world, started by the plugin for this test session.

    `url` is its base URL (`http://127.0.0.1:<port>`), `api_key` a key holding every scope (no
    rate limit), `client_id` the embedded world's id, `seed` the world's seed (the same seed,
    the same rolls), `data_dir` where the relay and the world keep their files. `reset()` puts
    the world back as it was when the relay started (the `vttrelay` fixture does it before each
    test)."""

    url: str
    api_key: str
    client_id: str
    seed: int
    data_dir: Path
    _harness: Resets = field(repr=False, compare=False)

    @property
    def headers(self) -> dict[str, str]:
        """The headers an HTTP call needs: `{"x-api-key": api_key}`."""
        return {"x-api-key": self.api_key}

    def client(self, **options: Any) -> Client:
        """A synchronous SDK client of this relay (`vttrelay.client.Client`; `options` as its
        keyword arguments); close it, or use it in a `with` block."""
        from vttrelay.client import Client

        return Client(self.url, api_key=self.api_key, **options)

    def async_client(self, **options: Any) -> AsyncClient:
        """An asyncio SDK client of this relay (`vttrelay.client.AsyncClient`)."""
        from vttrelay.client import AsyncClient

        return AsyncClient(self.url, api_key=self.api_key, **options)

    def reset(self) -> None:
        """Put the world back as it was when the relay started: its documents and files, no
        selection, no recent rolls, its dice and clock at their start; the relay's request
        ids count from 1 again. Takes milliseconds (a snapshot restore, no restart)."""
        self._harness.reset()
