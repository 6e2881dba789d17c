"""`/ws/api`: the client WebSocket as the reference relay speaks it (endpoints-beyond-seed §13),
an adapter of the request core (`core.py`): the same key, scope, rate, world and user rules as
REST, each refusal translated into an error frame.

A client connects, sends `{"type":"auth","token":"<api key>","clientId"?}` first and gets
`{"type":"connected","clientId","supportedTypes","eventChannels"}`, or an error frame and a close
with 4002 and the reason (`Authentication timeout`, `Invalid auth message`, `Invalid API key`,
`Invalid clientId`, ...: the core's texts in the reference's wording, `AUTH_TEXTS`); the connect
counts as one call for the key's rate limit and usage, as an SSE connect does. Then each
frame is checked in the reference's order, and every control reply echoes the caller's
`requestId` ("" when it sent none):

1. not JSON, or not an object -> `{"type":"error","error":"Invalid JSON"}` (text or binary frame);
2. `type` missing or not a string -> `Missing "type" field`;
3. `{type:"ping"}` -> `{type:"pong", requestId}`;
4. `{type:"subscribe", channel, ...filters, lastEventId?}` (scope `events:subscribe`) ->
   `{type:"subscribed", channel, requestId, lastEventId}`, then the replay of what came after
   `lastEventId`; the filters are those of the channel's SSE route (the chat `type` filter is
   named `chatType` here). Errors: `Invalid channel: "<c>". Supported: ...`, `Maximum event
   subscriptions reached for this client` (a key's limit per world and channel, as for SSE), or
   the core's refusal with its `status`. Events then arrive as `{type:"chat-event",
   event:"chat-create", id, data}` and so on; hook events also carry `hook` at the top level;
5. `{type:"unsubscribe", channel?}` -> `{type:"unsubscribed", channel, removed, requestId}`
   (without a channel: all of this socket's subscriptions, and `channel` is "all");
6. a type that is neither a world action nor `remote-request` -> `Unknown message type: "<t>"`;
7. a request without a string `requestId` -> `Missing "requestId" field for request messages`
   (no requestId key), and it is not run;
8. `{type:<action>, requestId, ...params}`: the route with that world action, its parameters read
   from the frame's top level and checked by `params.extract` as on REST, forwarded to the
   socket's world by `Gate.forward`. The reply comes back with `type` `<action>-result`, the
   caller's `requestId` and the socket's `clientId`; a refusal is `{type:"<action>-result",
   requestId, clientId, error, status}`. More than `MAX_IN_FLIGHT` (100) unanswered requests on
   one socket: refused at once (`Too many concurrent requests; try again shortly`, 429).
   `{type:"remote-request", requestId, targetClientId?, action, payload?}` is the same request to
   another world of the key's account (`payload` holds the parameters), answered
   `{type:"remote-response", requestId, success, data?, error?}` (`data`: the world's reply).

Any failure while serving a frame is answered with an error frame, never silence, and the socket
stays open. A socket that does not read its events fast enough gets a final error frame and is
closed with 1013 (`hub.EventHub` bounds what it may have queued). When its key stops working
(revoked, expired), each request is refused at once, and its subscriptions end within the hub's
`key_check_interval` as SSE streams do: a final error frame with the reason, then close 1008.
The protocol's codes, texts and frame tables are data in `ws_frames.py`; a socket's subscriptions
and its event outbox are `ws_subscriptions.Subscriptions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final

from aiohttp import WSMsgType, web

from vttrelay import protocol
from vttrelay.relay import core
from vttrelay.relay.accounts.key_cache import TOO_MANY_UNKNOWN_KEYS
from vttrelay.relay.accounts.preauth import PreAuthBudget
from vttrelay.relay.accounts.remote_logs import RemoteRequest
from vttrelay.relay.core import RelayError, error
from vttrelay.relay.events import ws_frames
from vttrelay.relay.events.model import dumps
from vttrelay.relay.events.ws_frames import (
    ACTION_ROUTES,
    AUTH_REFUSED,
    AUTH_TEXTS,
    INTERNAL_ERROR,
    INVALID_JSON,
    MISSING_REQUEST_ID,
    MISSING_TYPE,
    REMOTE_REQUEST,
    REMOTE_RESPONSE,
    SHUTTING_DOWN,
    SUPPORTED_TYPES,
    TOO_MANY_IN_FLIGHT,
    WS_TEXTS,
)
from vttrelay.relay.events.ws_subscriptions import Subscriptions
from vttrelay.relay.params import ParamError, extract
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.events.streams import Streams

log = logging.getLogger("vttrelay.relay.client_ws")  # the name it had before the move

MAX_IN_FLIGHT: Final = 100  # unanswered requests per socket; more are refused with 429


class ClientSocket:
    """One `/ws/api` connection: `run` authenticates, then reads frames until the socket closes.

    Replies are sent as they come; events go through the bounded outbox of its subscriptions
    (`events`, `ws_subscriptions.Subscriptions`), shared by all of them (one per channel).
    """

    def __init__(self, streams: Streams, request: web.Request) -> None:
        self.streams = streams
        self.gate = streams.gate  # the request core (core.py): keys, worlds, limits
        self.request = request
        self.ws = web.WebSocketResponse(
            max_msg_size=self.gate.config.client_frame_bytes, heartbeat=30.0, compress=False
        )
        self.budget: PreAuthBudget | None = None  # bytes allowed before auth (preauth.py)
        self.secret = ""  # the API key, looked up again (through the key cache) per message
        self.client_id = ""
        self.tasks: set[asyncio.Task[None]] = set()
        self.events = Subscriptions(self)  # its subscriptions and their outbox

    async def run(self) -> web.WebSocketResponse:
        await self.ws.prepare(self.request)
        preauth = self.gate.config.preauth_bytes
        self.budget = PreAuthBudget.install(self.request, preauth, "/ws/api")
        if not await self._authenticate():
            return self.ws
        writer = asyncio.ensure_future(self.events.write_events())
        self.streams.sockets.add(self)
        try:
            await self._serve()
        finally:
            self.streams.sockets.discard(self)
            self.events.finish()
            writer.cancel()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(writer, *self.tasks, return_exceptions=True)
            if not self.ws.closed:
                with contextlib.suppress(Exception):
                    await self.ws.close()
        return self.ws

    # Handshake ----------------------------------------------------------------------------------

    async def _refuse(self, code: int, message: str) -> bool:
        with contextlib.suppress(Exception):
            await self.ws.send_frame(dumps({"type": "error", "error": message}), WSMsgType.TEXT)
            await self.ws.close(code=code, message=message.encode()[:120])
        return False

    async def _authenticate(self) -> bool:
        try:
            msg = await self.ws.receive(timeout=self.gate.config.auth_timeout)
        except (TimeoutError, ConnectionError, RuntimeError):
            return await self._refuse(AUTH_REFUSED, "Authentication timeout")
        frame = (
            ws_frames.parse(msg.data) if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY) else None
        )
        token = frame.get("token") if frame else None
        if (
            frame is None
            or frame.get("type") != protocol.AUTH
            or not isinstance(token, str)
            or not token
        ):
            return await self._refuse(AUTH_REFUSED, "Invalid auth message")
        wanted = frame.get("clientId")
        wanted = wanted if isinstance(wanted, str) and wanted else None
        if self.gate.keys.missing(token) and not await self.gate.keys.load(
            token, self.request.remote or ""
        ):  # read in a thread, then cached; refused past the address's unknown-key budget
            return await self._refuse(AUTH_REFUSED, TOO_MANY_UNKNOWN_KEYS)
        try:
            key = await core.admitted(self.gate.admit(token, None, wanted))
            world = await self.gate.target_world(key, wanted)  # an offline one started
        except RelayError as exc:
            return await self._refuse(AUTH_REFUSED, AUTH_TEXTS.get(exc.message, exc.message))
        self.secret = token
        self.client_id = world.client_id
        if self.budget is not None:
            self.budget.release()
        await self.send(
            {
                "type": "connected",
                "clientId": self.client_id,
                "supportedTypes": SUPPORTED_TYPES,
                "eventChannels": list(protocol.CHANNELS),
            }
        )
        return True

    # Frames -------------------------------------------------------------------------------------

    async def _serve(self) -> None:
        while True:
            msg = await self.ws.receive()
            if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                frame = ws_frames.parse(msg.data)
                if frame is None:
                    await self.send({"error": INVALID_JSON, "type": "error"})
                    continue
                try:
                    await self._dispatch(frame)
                except Exception as exc:  # one bad frame must not end the socket, nor go unanswered
                    log.warning("/ws/api frame %r failed: %r", frame.get("type"), exc)
                    await self.send(
                        {
                            "error": INTERNAL_ERROR,
                            "requestId": ws_frames.request_id(frame),
                            "type": "error",
                        }
                    )
            elif msg.type in (
                WSMsgType.CLOSE,
                WSMsgType.CLOSING,
                WSMsgType.CLOSED,
                WSMsgType.ERROR,
            ):
                return

    async def send(self, frame: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.ws.send_frame(dumps(frame), WSMsgType.TEXT)

    async def _dispatch(self, frame: dict[str, Any]) -> None:
        """One frame, checked in the reference relay's order (endpoints-beyond-seed §13.2)."""
        kind = frame.get("type")
        request_id = ws_frames.request_id(frame)
        if not isinstance(kind, str):
            await self.send({"error": MISSING_TYPE, "requestId": request_id, "type": "error"})
        elif kind == "ping":
            await self.send({"requestId": request_id, "type": "pong"})
        elif kind == "subscribe":
            await self.events.subscribe(frame, request_id)
        elif kind == "unsubscribe":
            await self.events.unsubscribe(frame, request_id)
        elif kind not in ACTION_ROUTES and kind != REMOTE_REQUEST:
            await self.send(
                {
                    "error": f'Unknown message type: "{kind}"',
                    "requestId": request_id,
                    "type": "error",
                }
            )
        elif not isinstance(frame.get("requestId"), str):
            await self.send({"error": MISSING_REQUEST_ID, "type": "error"})
        elif len(self.tasks) >= MAX_IN_FLIGHT:  # refused before any check, never forwarded
            failed = error(429, TOO_MANY_IN_FLIGHT)
            if kind == REMOTE_REQUEST:
                await self.send(ws_frames.remote_failure(request_id, failed))
            else:
                await self.send(self._failure(kind, request_id, failed))
        else:
            if kind == REMOTE_REQUEST:
                work = self._remote_request(frame, request_id)
            else:
                work = self._request(ACTION_ROUTES[kind], frame, request_id)
            task = asyncio.ensure_future(work)
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    # Requests -----------------------------------------------------------------------------------

    def _failure(self, action: str, request_id: str, exc: RelayError) -> dict[str, Any]:
        """A refused request as the reference answers it (`<action>-result` with `error`), with
        the socket's `clientId` and the refusal's HTTP-style `status` added."""
        return {
            "clientId": self.client_id,
            "error": WS_TEXTS.get(exc.message, exc.message),
            "requestId": request_id,
            "status": exc.status,
            "type": protocol.result_type(action),
        }

    async def _request(self, route: Route, frame: dict[str, Any], request_id: str) -> None:
        action = route.action or ""
        try:
            reply = await self._forward(route, frame, self.client_id)
        except RelayError as exc:
            await self.send(self._failure(action, request_id, exc))
            return
        except Exception as exc:  # never silence: the caller gets an error frame
            log.warning("/ws/api %s request failed: %r", action, exc)
            await self.send(self._failure(action, request_id, error(500, INTERNAL_ERROR)))
            return
        reply["type"] = protocol.result_type(action)
        reply["requestId"] = request_id
        reply["clientId"] = self.client_id
        await self.send(reply)

    async def _forward(
        self, route: Route, params_frame: dict[str, Any], client_id: str
    ) -> dict[str, Any]:
        """One request through the core (the key is looked up again, so a revoked or expired
        key stops working on an open socket too); the world's reply frame, or RelayError."""
        key = await core.admitted(self.gate.admit(self.secret, route.scope, client_id))
        try:
            params = extract(route, {}, params_frame, {})
        except ParamError as exc:
            raise error(exc.status, exc.message) from None
        params["clientId"] = client_id  # the world named by the socket, never by the frame
        reply = await self.gate.forward(key, route, params)
        return dict(reply.frame)

    async def _remote_request(self, frame: dict[str, Any], request_id: str) -> None:
        """`{type:"remote-request", requestId, targetClientId, action, payload}`: one request to
        a world of this key's account by action name, with the same checks as REST; answered
        `{type:"remote-response", requestId, success, data?, error?}`."""
        action = frame.get("action")
        route = ACTION_ROUTES.get(action) if isinstance(action, str) else None
        target = frame.get("targetClientId")
        payload = frame.get("payload")
        try:
            if route is None:
                raise error(400, f'Unknown action: "{action}"')
            if target is not None and (not isinstance(target, str) or not target):
                raise error(400, "'targetClientId' must be a string")
            if payload is not None and not isinstance(payload, dict):
                raise error(400, "'payload' must be an object")
            reply = await self._forward(route, payload or {}, target or self.client_id)
        except RelayError as exc:
            self._log_remote(target, action, exc.body.get("error"))
            await self.send(ws_frames.remote_failure(request_id, exc))
            return
        except Exception as exc:  # never silence: the caller gets an error frame
            log.warning("/ws/api remote-request %s failed: %r", action, exc)
            self._log_remote(target, action, INTERNAL_ERROR)
            await self.send(ws_frames.remote_failure(request_id, error(500, INTERNAL_ERROR)))
            return
        self._log_remote(target, action, reply.get("error"))
        reply.pop("requestId", None)
        answer: dict[str, Any] = {
            "data": reply,
            "requestId": request_id,
            "success": not isinstance(reply.get("error"), str),
            "type": REMOTE_RESPONSE,
        }
        if not answer["success"]:
            answer["error"] = reply["error"]
        await self.send(answer)

    def _log_remote(self, target: Any, action: Any, failure: Any) -> None:
        """Tell the account's cross-world log about one remote-request (`failure`: its error
        text, None when it succeeded); only requests of a known key are logged."""
        recorder = self.streams.remote_requests
        key = self.gate.keys.cached(self.secret)
        if recorder is None or key is None:
            return
        recorder(
            RemoteRequest(
                account=key.account,
                source_client_id=self.client_id,
                source_token_id=key.id,
                target_client_id=target if isinstance(target, str) else self.client_id,
                action=action if isinstance(action, str) else "",
                success=not isinstance(failure, str),
                error_message=failure if isinstance(failure, str) else "",
                source_ip=self.request.remote or "",
            )
        )

    async def shutdown(self) -> None:
        """Close this socket because the relay stops (1001: clients may reconnect)."""
        with contextlib.suppress(Exception):
            await self.ws.close(code=SHUTTING_DOWN, message=b"Server shutting down")
