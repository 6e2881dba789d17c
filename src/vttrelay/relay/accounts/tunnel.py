"""The cross-world tunnel (accounts-auth.md §2.7, wire-protocol §3.3): a world calls another
world of its account through the relay, with the permissions its owner gave it.

The world sends `{type:"remote-request", requestId, targetClientId, action, payload,
autoStartIfOffline}` on its own socket (`/relay`) and gets `{type:"remote-response", requestId,
success, data?, error?, status?}`. The checks, in order, each a refusal with its status:

1. the world's settings (`worlds.WorldSettings`, set with PATCH /auth/known-clients/{id} or an
   approved pair-request upgrade): none (403 `Cross-world requests are not enabled for this
   world`);
2. `targetClientId` a string (400), not the world itself (400), in `allowedTargetClients` or
   that list holding "*" (403 `Target world not allowed: <id>`);
3. `action` a world action of the route table (400 `Unknown action: "<a>"`), its scope in
   `remoteScopes` (403 `Scope not allowed for cross-world requests: <scope>`), `payload` an
   object (400);
4. `remoteRequestsPerHour` (0: no limit) in the shared counters, per world (429);
5. then the request core forwards it as for any keyed call (`Gate.forward`, with a key made of
   the world's permissions: its account, its remote scopes, the target as its only world):
   the route's parameters checked, the target a world of the same account (401 otherwise), an
   offline target started when its owner allowed auto-start (the gate's starter), the reply.

Every request, answered or refused, is written to the cross-world log (`remote_logs.py`) with
the world's connection token and address, unless the account turned the log off.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Final

from vttrelay import protocol
from vttrelay.relay.accounts import worlds
from vttrelay.relay.accounts.remote_logs import RemoteRequest, RemoteRequestLog
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.core import Gate, RelayError, error
from vttrelay.relay.events.ws_frames import ACTION_ROUTES
from vttrelay.relay.params import ParamError, extract
from vttrelay.relay.store import KeyRecord, RelayStore

MAX_TEXT: Final = 256
HOUR: Final = 3600.0


class WorldTunnel:
    """Answers the worlds' `remote-request`s."""

    def __init__(
        self, store: RelayStore, gate: Gate, counters: Counters, log: RemoteRequestLog
    ) -> None:
        self.store = store
        self.gate = gate
        self.counters = counters
        self.log = log

    async def answer(self, world: Any, frame: dict[str, Any]) -> dict[str, Any]:
        """The `remote-response` to one `remote-request` of `world` (a connected world)."""
        request_id = frame.get("requestId")
        request_id = request_id[:MAX_TEXT] if isinstance(request_id, str) else ""
        target, action = frame.get("targetClientId"), frame.get("action")
        try:
            data = await self._call(world, target, action, frame.get("payload"))
        except RelayError as refused:
            self._log(world, target, action, refused.message)
            return {
                "type": protocol.REMOTE_RESPONSE,
                "requestId": request_id,
                "success": False,
                "error": refused.message,
                "status": refused.status,
            }
        failure = data.get("error")
        self._log(world, target, action, failure if isinstance(failure, str) else None)
        answer: dict[str, Any] = {
            "type": protocol.REMOTE_RESPONSE,
            "requestId": request_id,
            "success": not isinstance(failure, str),
            "data": data,
        }
        if isinstance(failure, str):
            answer["error"] = failure
        return answer

    async def _call(self, world: Any, target: Any, action: Any, payload: Any) -> dict[str, Any]:
        settings = await asyncio.to_thread(worlds.world_settings, self.store, world.client_id)
        if settings is None or settings.account != world.account:
            raise error(403, "Cross-world requests are not enabled for this world")
        if not isinstance(target, str) or not target or len(target) > MAX_TEXT:
            raise error(400, "'targetClientId' is required")
        if target == world.client_id:
            raise error(400, "A world cannot send a remote-request to itself")
        allowed = settings.allowed_targets
        if worlds.ALL_TARGETS not in allowed and target not in allowed:
            raise error(403, f"Target world not allowed: {target}")
        route = ACTION_ROUTES.get(action) if isinstance(action, str) else None
        if route is None:
            raise error(400, f'Unknown action: "{str(action)[:64]}"')
        if route.scope is not None and route.scope not in settings.remote_scopes:
            raise error(403, f"Scope not allowed for cross-world requests: {route.scope}")
        if payload is not None and not isinstance(payload, dict):
            raise error(400, "'payload' must be an object")
        if settings.remote_per_hour > 0:
            allowed_now = self.counters.allow(
                f"remote-{world.client_id}", settings.remote_per_hour, window=HOUR
            )
            if inspect.isawaitable(allowed_now):
                allowed_now = await allowed_now
            if not allowed_now:
                raise error(429, "Cross-world request limit reached for this hour")
        try:
            params = extract(route, {}, payload or {}, {})
        except ParamError as exc:
            raise error(exc.status, exc.message) from None
        params["clientId"] = target
        reply = await self.gate.forward(_world_key(world, settings), route, params)
        data = dict(reply.frame)
        data.pop("requestId", None)
        return data

    def _log(self, world: Any, target: Any, action: Any, failure: str | None) -> None:
        self.log.record(
            RemoteRequest(
                account=world.account,
                source_client_id=world.client_id,
                source_token_id=world.token_id,
                target_client_id=target if isinstance(target, str) else "",
                action=action if isinstance(action, str) else "",
                success=failure is None,
                error_message=failure or "",
                source_ip=str(world.metadata.get("ipAddress") or ""),
            )
        )


def _world_key(world: Any, settings: worlds.WorldSettings) -> KeyRecord:
    """What a world's cross-world call may do, as the request core reads a key: its account,
    its remote scopes, the target it may reach (checked above) and no rate of its own (the
    hourly limit was taken)."""
    return KeyRecord(
        id=f"world:{world.client_id}",
        account=world.account,
        name=f"world {world.client_id}",
        scopes=settings.remote_scopes,
        client_ids=(),
        user_id=None,
        expires_at=None,
        enabled=True,
        rate_per_minute=0,
        created_at=0.0,
        last_used_at=None,
        request_count=0,
    )
