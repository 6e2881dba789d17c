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

A request to a world held elsewhere goes to its holder over a direct link or the holder's
channel: `peers.py`.

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
from typing import TYPE_CHECKING, Any

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
)
from vttrelay.relay.backends.redis.link import (
    Link,
    Listener,
)
from vttrelay.relay.backends.redis.peers import Peers, RemoteWorld
from vttrelay.relay.link.pending import Reply, WorldGone

if TYPE_CHECKING:
    from vttrelay.relay.backends.ports import Store
    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.link.connection import WorldConnection, WorldListener

log = logging.getLogger("vttrelay.relay.directory")


class RedisDirectory(Peers):
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
        async with asyncio.timeout(10):
            await self._ready.wait()
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
