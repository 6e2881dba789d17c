"""The world directory over Redis: several relay instances serve one set of worlds.

Each instance keeps its own sockets in an in-process directory it holds (`LocalDirectory`, by
composition: what concerns a world on this instance is asked of it) and a mirror of the worlds
the other instances hold, so `get` stays a dict lookup on the hot path. Redis holds the truth
(keys under `prefix`, default `vttrelay:`):

- `instances` (sorted set): instance id -> its last heartbeat (Redis server time, ms). An
  instance beats every `check_interval` s; one silent for `heartbeat_ttl` s is dead.
- `worlds` (hash): client id -> the holder's entry (JSON: instance, conn, account, host,
  systemId, tokenName, tokenId, metadata, users, link). `conn` tells one connection from the
  next; `link` is where the holder's direct link listens (`redis.link`), empty without one.
- `dir` (pub/sub channel): `up` (an entry claimed or changed) and `down` (released), so every
  mirror follows; each instance also re-reads the whole hash every `resync_interval` s. And
  `close-token`: a connection token was revoked here (self-unpair), every instance closes its
  sockets of that token at once. And `joined`: an instance beat for the first time, so the
  others count it in `/api/status` at once rather than at their next check.
- `to:<instance>` (pub/sub channel): requests for the worlds an instance holds, and replies,
  when no direct link to the holder could be opened. A frame or reply over `INLINE_LIMIT` waits
  under `blob:<random>` (read once, then deleted).

Claiming (the duplicate-id rule, cluster-wide) is one Lua script: the id is free, or its holder
is dead, or the holder has the same host and account (a reconnect: it replaces the holder, whose
instance closes the old socket with 1000 when it sees the `up`); otherwise the claim fails and
the gateway answers 4004 before `auth-success`.

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

Failure: every instance runs the same check every `check_interval` s (one Lua script: beat,
then reap each instance whose heartbeat is older than `heartbeat_ttl`: its entries are removed
and announced `down`). Calls waiting on a dead instance fail with 503 at that check, so within
`check_interval` (0.25 s by default) of the heartbeat expiring; nothing stays claimed by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from vttrelay.protocol import Close
from vttrelay.relay.backends.local import LocalDirectory, WorldIndex
from vttrelay.relay.backends.ports import BackendUnavailable
from vttrelay.relay.backends.redis.client import open_redis, stop_tasks
from vttrelay.relay.backends.redis.directory_scripts import (
    CLAIM,
    RECLAIM,
    TICK,
    UPDATE,
    decode,
    encode,
)
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
    from vttrelay.relay.backends.ports import Store
    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.link.connection import WorldConnection, WorldListener

log = logging.getLogger("vttrelay.relay.directory")

# Larger request frames and replies go through a key named in the message (`_publish`).
INLINE_LIMIT: Final = 512 * 1024
LINK_RETRY: Final = 5.0  # seconds before a link that could not be opened is tried again


class RemoteWorld:
    """A world held by another instance, as calls see it (`backends.WorldHandle`)."""

    def __init__(self, directory: RedisDirectory, client_id: str, entry: dict[str, Any]) -> None:
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


class RedisDirectory:
    """This instance's sockets (`local`, a `LocalDirectory`) plus the cluster's, through Redis."""

    def __init__(
        self,
        url: str,
        instance_id: str,
        *,
        prefix: str = "vttrelay:",
        heartbeat_ttl: float = 3.0,
        check_interval: float = 0.25,
        resync_interval: float = 10.0,
        link_host: str | None = "127.0.0.1",
        link_limit: int = 10_000,
    ) -> None:
        self.instance_id = instance_id
        self.local = LocalDirectory(instance_id)
        self._index = self.local.index  # this instance's sockets
        self._by_id = self._index.by_id  # read directly by `get`: the hot path
        self.url = url
        self.prefix = prefix
        self.heartbeat_ttl = heartbeat_ttl
        self.check_interval = check_interval
        self.resync_interval = resync_interval
        self.worlds_key = prefix + "worlds"
        self.instances_key = prefix + "instances"
        self.dir_channel = prefix + "dir"
        self.channel = self.channel_of(instance_id)
        self._remote_index: WorldIndex[RemoteWorld] = WorldIndex()
        self._remote = self._remote_index.by_id  # read directly by `get`
        self._conn: dict[str, str] = {}  # client id -> conn of this instance's socket
        self._live: list[str] = [instance_id]
        # calls waiting on another instance, by request id: the future, the world, the link the
        # request went on (None: published)
        self._pending: dict[str, tuple[asyncio.Future[Reply], RemoteWorld, Link | None]] = {}
        self.link_host = link_host  # None: no direct links, every hop through pub/sub
        self.link_limit = link_limit  # connections the link port holds at most
        self.link_address = ""  # where this instance's link listens (in its entries)
        self._listener: Listener | None = None
        self._links: dict[str, Link] = {}  # open links to holders, by their address
        self._dialing: dict[str, asyncio.Future[Link | None]] = {}
        self._unreachable: dict[str, float] = {}  # address -> when to try it again (loop time)
        self._serving: set[asyncio.Future[Any]] = set()
        self._claiming: dict[str, _Turn] = {}
        self._redis: aioredis.Redis | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._ready = asyncio.Event()

    def channel_of(self, instance_id: str) -> str:
        return f"{self.prefix}to:{instance_id}"

    @property
    def redis(self) -> aioredis.Redis:
        if self._redis is None:
            raise RuntimeError("the Redis directory is not started")
        return self._redis

    # Lookups (sync: the hot path) ---------------------------------------------------------------

    def get(self, client_id: str) -> Any:
        world = self._by_id.get(client_id)
        return world if world is not None else self._remote.get(client_id)

    def for_account(self, account: str) -> list[Any]:
        return [*self._index.of_account(account), *self._remote_index.of_account(account)]

    def instances(self) -> list[str]:
        return list(self._live)

    def __iter__(self) -> Iterator[WorldConnection]:
        return iter(self.local)

    def __len__(self) -> int:
        return len(self.local)

    # This instance's sockets and listeners: the local directory's -----------------------------

    def add_listener(self, listener: WorldListener) -> None:
        self.local.add_listener(listener)

    def remove_listener(self, listener: WorldListener) -> None:
        self.local.remove_listener(listener)

    def notify(self, method: str, *args: Any) -> None:
        self.local.notify(method, *args)

    async def close_all(
        self, code: int = Close.GOING_AWAY, reason: str = "Server shutting down"
    ) -> None:
        await self.local.close_all(code, reason)

    async def check_tokens(self, store: Store) -> int:
        return await self.local.check_tokens(store)

    def links(self) -> list[str]:
        """The addresses of the direct links this instance has open to holders of worlds."""
        return list(self._links)

    # Claiming -----------------------------------------------------------------------------------

    def _entry(self, world: WorldConnection, conn: str) -> bytes:
        return orjson.dumps(
            {
                "instance": self.instance_id,
                "conn": conn,
                "account": world.account,
                "host": world.peer_host,
                "systemId": world.system_id,
                "tokenName": world.token_name,
                "tokenId": world.token_id,
                "metadata": world.metadata,
                "users": world.users,
                "link": self.link_address,
            }
        )

    async def claim(self, world: WorldConnection) -> bool:
        # claims of one id on this instance run one after the other, so the last socket
        # registered here is the one whose entry Redis keeps
        turn = self._claiming.get(world.client_id)
        if turn is None:
            turn = self._claiming[world.client_id] = _Turn()
        turn.waiting += 1
        try:
            async with turn.lock:
                return await self._claim(world)
        finally:
            turn.waiting -= 1
            if not turn.waiting:
                del self._claiming[world.client_id]

    async def _claim(self, world: WorldConnection) -> bool:
        if self.local.holder_conflict(world):
            return False
        conn = secrets.token_hex(8)
        claimed = await self.redis.eval(
            CLAIM,
            3,
            self.worlds_key,
            self.instances_key,
            self.dir_channel,
            world.client_id,
            self._entry(world, conn),
            world.peer_host,
            world.account,
            int(self.heartbeat_ttl * 1000),
        )
        if not claimed or self.local.holder_conflict(world):  # another socket came in meanwhile
            if claimed:
                self._spawn(self._update(world.client_id, conn, b""))
            return False
        world.instance_id = None
        self._conn[world.client_id] = conn
        self._remote_index.pop(world.client_id)  # a reconnect replaced it: no disconnect
        self.local.take(world)
        return True

    def release(self, world: WorldConnection) -> bool:
        if not self.local.release(world):
            return False
        conn = self._conn.pop(world.client_id, None)
        if conn is not None and self._redis is not None:
            self._spawn(self._update(world.client_id, conn, b""))
        return True

    def updated(self, world: WorldConnection) -> None:
        """Publish a local world's changed users or metadata to the other instances."""
        conn = self._conn.get(world.client_id)
        if conn is not None and self._by_id.get(world.client_id) is world:
            self._spawn(self._update(world.client_id, conn, self._entry(world, conn)))

    async def _update(self, client_id: str, conn: str, entry: bytes) -> None:
        with contextlib.suppress(RedisError, RuntimeError):
            await self.redis.eval(
                UPDATE, 2, self.worlds_key, self.dir_channel, client_id, conn, entry
            )

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    async def close_token(self, token_id: str, code: int, reason: str) -> int:
        """Close this instance's worlds of a token, and tell the others to close theirs."""
        closed = await self.local.close_token(token_id, code, reason)
        change = {
            "op": "close-token",
            "token": token_id,
            "code": code,
            "reason": reason,
            "from": self.instance_id,
        }
        with contextlib.suppress(RedisError, RuntimeError):
            await self.redis.publish(self.dir_channel, orjson.dumps(change))
        return closed

    # The mirror ---------------------------------------------------------------------------------

    def _on_up(self, client_id: str, entry: dict[str, Any]) -> None:
        instance = entry.get("instance")
        if instance == self.instance_id:
            return  # our own claim: the socket is registered locally
        if instance not in self._live:
            self._live.append(str(instance))  # it beats: the next check confirms it
        local = self._by_id.get(client_id)
        if local is not None:
            # the same host reconnected through another instance: its claim replaced ours
            self._index.pop(client_id)
            self._conn.pop(client_id, None)
            log.info("world %s replaced by a reconnect on %s", client_id, instance)
            asyncio.ensure_future(local.close(Close.NORMAL, "Replaced by reconnect"))
        found = self._remote.get(client_id)
        if found is not None and found.conn == entry.get("conn"):
            found.refresh(entry)
        else:
            if found is not None:  # a reconnect replaced it: its streams live on
                self._drop_remote(found, gone=False)
            self._remote_index.put(RemoteWorld(self, client_id, entry))

    def _on_change(self, change: dict[str, Any]) -> None:
        """A message on the `dir` channel: a world up or down, a token to close, a new instance."""
        op = change.get("op")
        if op == "up":
            self._on_up(change["id"], orjson.loads(change["entry"]))
        elif op == "down":
            self._on_down(change["id"], change.get("conn", ""))
        elif op == "joined" and change["instance"] not in self._live:
            self._live.append(str(change["instance"]))  # it beats: the next check confirms it
        elif op == "close-token" and change.get("from") != self.instance_id:
            work = self.local.close_token(change["token"], int(change["code"]), change["reason"])
            self._spawn(work)

    def _on_down(self, client_id: str, conn: str) -> None:
        found = self._remote.get(client_id)
        if found is not None and found.conn == conn:
            self._drop_remote(found)

    def _drop_remote(self, world: RemoteWorld, gone: bool = True) -> None:
        """Forget a world held elsewhere. `gone` (it disconnected, or its instance died, not
        replaced by a reconnect): the listeners hear `world_disconnected`, as on one process, so
        the SSE streams of it end here too. They hear it `check_interval` s later: its last
        events travel on other connections (the event log's), and a stream ends after what the
        world sent before it left, as on one process."""
        world.closed = True
        if self._remote.get(world.client_id) is world:
            self._remote_index.pop(world.client_id)
            if gone:
                loop = asyncio.get_running_loop()
                loop.call_later(self.check_interval, self.local.notify, "world_disconnected", world)

    async def resync(self) -> None:
        """Rebuild the mirror from the `worlds` hash (start-up, after a lost subscription, and
        every `resync_interval` s to heal a missed message)."""
        raw = await self.redis.hgetall(self.worlds_key)
        seen: set[str] = set()
        for key, value in raw.items():
            client_id = key.decode() if isinstance(key, bytes) else str(key)
            entry = orjson.loads(value)
            if entry.get("instance") == self.instance_id or entry.get("instance") not in self._live:
                continue
            seen.add(client_id)
            self._on_up(client_id, entry)
        for world in [w for cid, w in self._remote.items() if cid not in seen]:
            self._drop_remote(world)
        for client_id, conn in list(self._conn.items()):
            held = raw.get(client_id.encode())
            if held is None or orjson.loads(held).get("conn") != conn:
                await self._reclaim(client_id, conn)

    async def _reclaim(self, client_id: str, conn: str) -> None:
        """Put back the entry of a socket we still hold, or close it if the id moved on."""
        world = self._by_id.get(client_id)
        if world is None or self._conn.get(client_id) != conn:
            return
        kept = await self.redis.eval(
            RECLAIM, 2, self.worlds_key, self.dir_channel, client_id, conn, self._entry(world, conn)
        )
        if not kept and self._conn.get(client_id) == conn:
            self._index.pop(client_id)
            self._conn.pop(client_id, None)
            log.info("world %s: held elsewhere now; closing this socket", client_id)
            asyncio.ensure_future(world.close(Close.NORMAL, "Replaced by reconnect"))

    def _instances_changed(self, live: list[str]) -> None:
        """Forget the worlds of instances that are no longer alive; fail calls waiting on them."""
        self._live = live
        alive = set(live)
        for world in [w for w in self._remote.values() if w.instance_id not in alive]:
            self._drop_remote(world)
        for request_id, (future, world, _) in list(self._pending.items()):
            if world.instance_id not in alive and not future.done():
                future.set_exception(WorldGone())
                self._pending.pop(request_id, None)

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

    # Background ---------------------------------------------------------------------------------

    async def _tick(self, reap: str = "", beat: bool = True) -> bool:
        """Beat (unless `beat` is False), reap the dead (and `reap`), learn the live instances.
        True when this instance had been missing from the set (taken for dead: its worlds must
        be claimed again)."""
        live = await self.redis.eval(
            TICK,
            3,
            self.worlds_key,
            self.instances_key,
            self.dir_channel,
            self.instance_id if beat else "",
            int(self.heartbeat_ttl * 1000),
            reap,
        )
        names = [x.decode() if isinstance(x, bytes) else str(x) for x in live]
        self._instances_changed(names[1:])
        return names[0] == "1"

    async def _checks(self) -> None:
        """Beat, reap the dead, and now and then re-read the mirror, until cancelled."""
        loop = asyncio.get_running_loop()
        next_resync = loop.time() + self.resync_interval
        while True:
            await asyncio.sleep(self.check_interval)
            try:
                rejoined = await self._tick()
                if rejoined or loop.time() >= next_resync:
                    next_resync = loop.time() + self.resync_interval
                    await self.resync()
            except (RedisError, OSError) as exc:
                log.warning("directory check failed: %s", exc)

    async def _listen(self) -> None:
        """Follow `dir` and this instance's channel; resubscribe (and resync) after an error."""
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self.dir_channel, self.channel)
                await self.resync()
                self._ready.set()
                async for message in pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    try:
                        if message["channel"] == self.channel.encode():
                            self._on_message(message["data"])
                        else:
                            self._on_change(orjson.loads(message["data"]))
                    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
                        log.warning("malformed directory message dropped")
            except (RedisError, OSError) as exc:
                log.warning("directory subscription lost: %s; resubscribing", exc)
                await asyncio.sleep(self.check_interval)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def start(self) -> None:
        await self._start_link()
        self._redis = open_redis(self.url, self.instance_id)
        try:
            await self._tick()
        except (RedisError, OSError) as exc:
            await self._redis.aclose()
            self._redis = None
            await self._stop_links()
            raise BackendUnavailable(f"Redis at {self.url} is unreachable: {exc}") from exc
        self._tasks = [
            asyncio.ensure_future(self._listen()),
            asyncio.ensure_future(self._checks()),
        ]
        await asyncio.wait_for(self._ready.wait(), 10)
        # once subscribed, learn again who is alive: an instance that joined between the first
        # check and the subscription was announced before we listened
        await self._tick()
        log.info("instance %s joined %s (%d alive)", self.instance_id, self.url, len(self._live))

    async def stop(self) -> None:
        """Leave the cluster: release every id this instance holds, stop beating."""
        await stop_tasks(self._tasks)
        if self._serving:
            await asyncio.gather(*self._serving, return_exceptions=True)
        if self._redis is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._tick(reap=self.instance_id, beat=False)
            await self._redis.aclose()
            self._redis = None
        for future, _, _ in self._pending.values():
            if not future.done():
                future.set_exception(WorldGone())
        self._pending.clear()
        await self._stop_links()


class _Turn:
    """The claims of one client id waiting on this instance, one at a time."""

    __slots__ = ("lock", "waiting")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.waiting = 0


def redis_directory(config: RelayConfig) -> RedisDirectory:
    """The directory of `config.redis_url` with the config's heartbeat settings."""
    assert config.redis_url
    return RedisDirectory(
        config.redis_url,
        config.instance_id,
        heartbeat_ttl=config.heartbeat_ttl,
        check_interval=config.heartbeat_check_interval,
        link_host=config.host,
        link_limit=config.max_connections,
    )
