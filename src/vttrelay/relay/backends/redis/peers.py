"""How one relay instance of a Redis cluster reaches the worlds the others hold (`Peers`, the base
of `directory.RedisDirectory`): the Redis connection and each instance's channel, a call to a
world held elsewhere (`RemoteWorld`), the requests it receives from the others, and the direct
links between instances (`redis.link`).

A request to a world held elsewhere goes to its holder as one message (a JSON head line, then
the frame) over the direct link to the holder (`redis.link`: one TCP connection per pair of
instances, opened on the first call and kept; the reply comes back on it), or, when the link
cannot be opened, published on the holder's `to:<instance>` channel (the reply comes back on
the caller's channel). The link is there because the hop through pub/sub cost ~0.5 ms of CPU
per call over the two relays and Redis, three to four times a whole call on one relay (bench/
RESULTS.md, "Issue 15: --workers 2"); Redis keeps the directory, the heartbeats and the
fallback. The caller keeps the route's timeout itself (408), and a holder that says the world
is gone, or that is unreachable (no subscriber on its channel, or its link lost while the call
waits: a killed process), or that is found dead while the call waits, fails it with `WorldGone`
(503), as a disconnect does on one process. Once its worlds are
released, a call naming one gets 404 `Invalid client ID` until it reconnects somewhere, as for
any world that left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any, Final

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from vttrelay.relay.backends.redis.directory_scripts import decode, encode
from vttrelay.relay.backends.redis.link import (
    Admission,
    Link,
    LinkAddress,
    Listener,
    dial,
    link_hosts,
    listen,
)
from vttrelay.relay.link.connection import send_quietly
from vttrelay.relay.link.pending import Reply, WorldGone, expire_reply
from vttrelay.relay.link.session import now_ms

if TYPE_CHECKING:
    from vttrelay.relay.link.connection import WorldConnection

log = logging.getLogger("vttrelay.relay.directory")

# Larger request frames and replies go through a key named in the message (`_publish`).
INLINE_LIMIT: Final = 512 * 1024
LINK_RETRY: Final = 5.0  # seconds before a link that could not be opened is tried again


class RemoteWorld:
    """A world held by another instance, as calls see it (`backends.WorldHandle`)."""

    def __init__(self, directory: Peers, client_id: str, entry: dict[str, Any]) -> None:
        self.directory = directory
        self.client_id = client_id
        self.closed = False
        self.refresh(entry)

    def refresh(self, entry: dict[str, Any]) -> None:
        self.instance_id: str | None = str(entry.get("instance") or "")
        self.conn = str(entry.get("conn") or "")
        self.account = str(entry.get("account") or "")
        self.peer_host = str(entry.get("host") or "")
        self.system_id = str(entry.get("systemId") or "")
        self.token_name = str(entry.get("tokenName") or "")
        self.token_id = str(entry.get("tokenId") or "")
        metadata = entry.get("metadata")
        self.metadata: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
        users = entry.get("users")
        self.users: list[dict[str, Any]] = users if isinstance(users, list) else []
        self.link = str(entry.get("link") or "")

    def __repr__(self) -> str:
        return f"<RemoteWorld {self.client_id} on {self.instance_id}>"

    async def request(self, frame: dict[str, Any], timeout: float) -> Reply:
        return await self.directory.remote_request(self, frame, timeout)

    async def send(self, frame: dict[str, Any]) -> None:
        await self.directory.remote_send(self, frame)


class Peers:
    """The other instances, as this one talks to them (set up by `RedisDirectory.__init__`)."""

    instance_id: str
    prefix: str
    url: str
    _by_id: dict[str, WorldConnection]  # this instance's worlds (requests from others run there)
    _redis: aioredis.Redis | None
    _serving: set[asyncio.Future[Any]]
    # calls waiting on another instance, by request id: the future, the world, the link the
    # request went on (None: published)
    _pending: dict[str, tuple[asyncio.Future[Reply], RemoteWorld, Link | None]]
    link_host: str | None  # None: no direct links, every hop through pub/sub
    link_limit: int  # connections the link port holds at most
    link_address: str  # where this instance's link listens (in its entries)
    _listener: Listener | None
    _links: dict[str, Link]  # open links to holders, by their address
    _dialing: dict[str, asyncio.Future[Link | None]]
    _unreachable: dict[str, float]  # address -> when to try it again (loop time)

    def channel_of(self, instance_id: str) -> str:
        return f"{self.prefix}to:{instance_id}"

    @property
    def redis(self) -> aioredis.Redis:
        if self._redis is None:
            raise RuntimeError("the Redis directory is not started")
        return self._redis

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    # Requests to other instances --------------------------------------------------------------

    async def remote_request(
        self, world: RemoteWorld, frame: dict[str, Any], timeout: float
    ) -> Reply:
        """Send the frame to the world's holder (its link, else its channel) and await the reply
        it sends back."""
        request_id = str(frame["requestId"])
        instance = world.instance_id or ""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Reply] = loop.create_future()
        timer = loop.call_later(timeout, expire_reply, future)
        try:
            if world.closed:
                raise WorldGone()
            head = {"k": "req", "from": self.instance_id, "id": world.client_id, "t": timeout}
            link = await self._link_to(world)
            self._pending[request_id] = (future, world, link)
            if link is None or not link.send(encode(head, orjson.dumps(frame))):
                self._pending[request_id] = (future, world, None)
                try:
                    receivers = await self._publish(
                        self.channel_of(instance), head, orjson.dumps(frame), timeout
                    )
                except RedisError as exc:
                    raise WorldGone() from exc
                if not receivers:
                    raise WorldGone()  # its instance is not listening: gone
            return await future
        finally:
            timer.cancel()
            if self._pending.get(request_id, (None,))[0] is future:
                del self._pending[request_id]

    async def remote_send(self, world: RemoteWorld, frame: dict[str, Any]) -> None:
        """Send a frame that needs no reply to a world on another instance."""
        if world.closed:
            raise WorldGone()
        head = {"k": "send", "from": self.instance_id, "id": world.client_id}
        link = await self._link_to(world)
        if link is not None and link.send(encode(head, orjson.dumps(frame))):
            return
        try:
            await self._publish(
                self.channel_of(world.instance_id or ""), head, orjson.dumps(frame), 30.0
            )
        except RedisError as exc:
            raise WorldGone() from exc

    async def _publish(
        self, channel: str, head: dict[str, Any], payload: bytes, keep: float
    ) -> int:
        """Publish one message; returns how many instances received it. A payload over
        INLINE_LIMIT is stored under a key that lives `keep` seconds (and is deleted when read)
        and the message names the key: Redis cuts off a subscriber whose unread messages pass
        32 MB, and a reply may be larger."""
        if len(payload) <= INLINE_LIMIT:
            return int(await self.redis.publish(channel, encode(head, payload)))
        blob = f"{self.prefix}blob:{secrets.token_hex(8)}"
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(blob, payload, px=max(1000, int(keep * 1000) + 1000))
            pipe.publish(channel, encode({**head, "blob": blob}))
            results = await pipe.execute()
        return int(results[1])

    def _on_message(self, data: bytes) -> None:
        head, payload = decode(data)
        if head.get("blob"):
            self._spawn(self._fetch(head))
        else:
            self._dispatch(head, payload)

    async def _fetch(self, head: dict[str, Any]) -> None:
        """Read (and delete) a message's stored payload, then handle the message."""
        try:
            payload = await self.redis.getdel(str(head["blob"]))
        except RedisError:
            payload = None
        if payload is None:  # expired or lost: a request then times out; a reply fails
            head = {"k": "gone", "rid": head.get("rid")} if head.get("k") == "rep" else {}
            payload = b""
        self._dispatch(head, payload if isinstance(payload, bytes) else payload.encode())

    def _dispatch(self, head: dict[str, Any], payload: bytes, link: Link | None = None) -> None:
        """Handle one message from another instance; `link`: the link it came on (None: pub/sub)."""
        kind = head.get("k")
        if kind == "rep" or kind == "gone":
            pending = self._pending.pop(str(head.get("rid")), None)
            if pending is None or pending[0].done():
                return
            if kind == "rep":
                pending[1].metadata["lastSeen"] = now_ms()  # as a reply does on its instance
                error = head.get("e")  # the holder's verdict: no second parse of the reply here
                reply = Reply(payload) if error is None else Reply(payload, None, bool(error))
                pending[0].set_result(reply)
            else:
                pending[0].set_exception(WorldGone())
        elif kind == "req":
            self._spawn(self._serve_request(head, payload, link))
        elif kind == "send":
            world = self._by_id.get(str(head.get("id")))
            if world is not None:
                send_quietly(world, payload)

    async def _serve_request(
        self, head: dict[str, Any], payload: bytes, link: Link | None = None
    ) -> None:
        """Run a request from another instance on our world; reply on the link it came on, or
        on the caller's channel."""
        frame = orjson.loads(payload)
        request_id = frame.get("requestId")
        reply_to = self.channel_of(str(head.get("from")))
        world = self._by_id.get(str(head.get("id")))
        try:
            if world is None or world.closed:
                raise WorldGone()
            timeout = float(head.get("t") or 30.0)
            reply = await world.request(frame, timeout)
            answer = {"k": "rep", "rid": request_id, "e": int(reply.is_error)}
            payload = reply.raw
        except WorldGone:
            answer, payload = {"k": "gone", "rid": request_id}, b""
        except TimeoutError:
            return  # the caller times out by itself (its timer started first)
        if link is not None:
            link.send(encode(answer, payload))  # lost with the link: the caller fails the call
            return
        with contextlib.suppress(RedisError, RuntimeError):
            await self._publish(reply_to, answer, payload, 60.0)

    # Direct links to other instances (`redis.link`) --------------------------------------------

    async def _link_to(self, world: RemoteWorld) -> Link | None:
        """The open link to the world's holder, opened on the first call; None when it has no
        link or it cannot be opened now (the call goes through pub/sub then)."""
        if not world.link:
            return None
        link = self._links.get(world.link)
        if link is not None:
            return link
        dialing = self._dialing.get(world.link)
        if dialing is None:
            if self._unreachable.get(world.link, 0.0) > asyncio.get_running_loop().time():
                return None
            dialing = self._dialing[world.link] = asyncio.ensure_future(self._dial(world.link))
        return await asyncio.shield(dialing)

    async def _dial(self, text: str) -> Link | None:
        loop = asyncio.get_running_loop()
        try:
            address = LinkAddress.parse(text)
            if address is None:
                raise ValueError(f"not a link address: {text!r}")
            link = await dial(address, self._on_link_message, self._on_link_lost)
        except (OSError, TimeoutError, ValueError) as exc:
            log.warning("no direct link to %s (%r): calls go through Redis", text, exc)
            self._unreachable[text] = loop.time() + LINK_RETRY
            return None
        finally:
            self._dialing.pop(text, None)
        link.address = text
        self._links[text] = link
        return link

    def _on_link_message(self, link: Link, data: bytes) -> None:
        try:
            head, payload = decode(data)
            self._dispatch(head, payload, link)
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
            log.warning("malformed link message dropped")

    def _on_link_lost(self, link: Link) -> None:
        """A link closed: forget it (a caller's), and fail the calls waiting on it."""
        if self._links.get(link.address) is link:
            del self._links[link.address]
        for request_id, (future, _, via) in list(self._pending.items()):
            if via is link:
                del self._pending[request_id]
                if not future.done():
                    future.set_exception(WorldGone())

    async def _start_link(self) -> None:
        if self.link_host is None:
            return
        bind, advertise = link_hosts(self.link_host, self.url)
        self._listener = await listen(
            bind, advertise, self._on_link_message, self._on_link_lost, self.link_limit
        )
        self.link_address = str(self._listener.address)

    def count_links_in(self, gate: Admission) -> None:
        """Count the link port's connections against the HTTP site's connection limit too."""
        if self._listener is not None:
            self._listener.doorman.gate = gate

    async def _stop_links(self) -> None:
        for link in list(self._links.values()):
            link.close()
        self._links.clear()
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
