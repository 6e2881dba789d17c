"""The embedded world at run time: its store, dice, clock, token selection, event subscriptions,
its action table, and the one place where an action runs in a transaction and its events are
sent after commit.

`World.handle` owns dispatch over the world's `ActionTable` (a value given at start-up). The
agent only moves frames: `attach(relay, sink)` when it is connected (event frames then go to
`sink`), `answer(frame)` for each request (the encoded reply), `set_subscription` for the
relay's `event-subscription-update` counts, `detach()` when the connection ends.

A synchronous handler runs inside one store transaction (`run_action`): `ActionError` (or any
other exception) rolls everything back and becomes the action's error reply
(`ActionSpec.error_reply`); an `ActionError(..., bare=True)` is just `{type, requestId, "error":
text}`. An async handler (execute-js, the scene picture) gets a context without an open
transaction and uses `ctx.transact(fn)` for its reads and writes. Before any handler, an unknown
`userId` (by id, then case-insensitive name) is answered with
`{"type", "requestId", "error": "User not found: <id>", "data": null}`.

Every transaction an action runs in has a time limit (`time_limit`, `ACTION_TIME_LIMIT` by
default, counted from the request's arrival): each read and write of the store, and each
`ctx.checkpoint()` of a long loop, checks it, and so does the commit. An action past its limit
stops there with an error reply and commits nothing (the relay stops waiting after 10 s at the
least, and a caller who got 408 must not find the change made after all). Before the commit the
world also checks every document written against `rules.bounds` (no embedded collection past
its bound, no document past its size), whichever action wrote it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import orjson

from vttrelay import protocol
from vttrelay.world.errors import ActionError, UserNotFound
from vttrelay.world.files.store import FileStore
from vttrelay.world.model import documents
from vttrelay.world.rules import bounds
from vttrelay.world.rules import rolls as rolls_rules
from vttrelay.world.runtime.chance import SEEDED_EPOCH_MS, Chance
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.events import collect_document_events
from vttrelay.world.runtime.heavy import HeavyWork
from vttrelay.world.runtime.limit import TimeLimit
from vttrelay.world.runtime.replies import encode_reply, error_reply
from vttrelay.world.runtime.table import ActionTable, reply_head
from vttrelay.world.store.sqlite import Tx, WorldStore

if TYPE_CHECKING:
    from vttrelay.world.rules.dice import Dice

log = logging.getLogger(__name__)
T = TypeVar("T")

# Seconds an action may run (sync actions, and each transaction of an async one). Under the
# relay's shortest wait for a reply (10 s), with 2 s for the reply to reach the caller.
ACTION_TIME_LIMIT: Final = 8.0

WORLD_DIR = "world"
WORLD_DB = "world.db"
FILES_DIR = "files"


def world_dir(data_dir: Path) -> Path:
    """`<data-dir>/world`: the world's database and its stored relay connection."""
    return Path(data_dir) / WORLD_DIR


def world_db_path(data_dir: Path) -> Path:
    return world_dir(data_dir) / WORLD_DB


class World:
    """One embedded world. Not thread-safe: run it on one event loop."""

    def __init__(
        self,
        store: WorldStore,
        *,
        actions: ActionTable,
        dice: Dice | None = None,
        clock: Callable[[], int] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        time_limit: float = ACTION_TIME_LIMIT,
        files: FileStore | None = None,
        seed: int | None = None,
    ) -> None:
        self.store = store
        self.actions = actions
        self.files = files  # the file store (`data` and `public`), None: no files
        self._dice = dice
        # the world's one generator and its clock (`runtime.chance`; `seed`: reproducible)
        self.chance = Chance(seed, floor_ms=store.latest_chat_time() if seed is not None else 0)
        self._clock = clock or self.chance.wall_ms
        self._monotonic = monotonic  # what time limits are measured with (seconds)
        self.time_limit = time_limit
        self._last_ms = 0
        self.selection: list[str] = []  # the GM's controlled tokens (token uuids)
        self.subscriptions: dict[str, int] = {}
        self.sink: Callable[[dict[str, Any]], None] | None = None
        self.online: set[str] = set()  # ids of users shown as active
        self.recent_rolls: list[dict[str, Any]] = []  # newest first (GET /rolls, /lastroll)
        self.heavy = HeavyWork()  # pictures: in a worker process, off the world's loop

    @classmethod
    def open(cls, data_dir: Path, *, actions: ActionTable, **kwargs: Any) -> World:
        """Open `<data-dir>/world/world.db`, seeding the demo world into a fresh file, and its
        file store `<data-dir>/world/files/`; it answers the actions of `actions`. `seed`
        (among `kwargs`): the world's rolls, ids and clock are reproducible (`runtime.chance`)."""
        from vttrelay.world.store.seed import seed

        store = WorldStore(world_db_path(data_dir))
        if store.is_empty():
            given = kwargs.get("seed")
            if given is None:
                seed(store)
            else:  # the same demo world each time: its timestamps and the ids it lacks
                seed(store, now=SEEDED_EPOCH_MS, new_id=Chance(given).new_id)
        kwargs.setdefault("files", FileStore(world_dir(data_dir) / FILES_DIR))
        return cls(store, actions=actions, **kwargs)

    def snapshot(self, dest: Path) -> None:
        """Save the world as it is now under `dest` (a new directory): its store and its files,
        for `restore` (the pytest plugin takes one of the fresh demo world)."""
        dest.mkdir(parents=True)
        self.store.backup_to(dest / WORLD_DB)
        if self.files is not None:
            self.files.snapshot(dest / FILES_DIR)

    def restore(self, snapshot: Path) -> None:
        """Put the world back as `snapshot` saved it: documents, files, the token selection,
        the recent rolls, and its generator and clock at their start (a seeded world then
        answers as it did after the snapshot); the relay is told the users again."""
        self.store.restore_from(snapshot / WORLD_DB)
        if self.files is not None:
            self.files.restore(snapshot / FILES_DIR)
        self.selection = []
        self.recent_rolls = []
        self.chance.restart(self.store.latest_chat_time())
        self._last_ms = 0
        self.send_player_list()

    def close(self) -> None:
        self.heavy.close()
        if self.files is not None:
            self.files.close()
        self.store.close()

    # Basics ---------------------------------------------------------------------------------

    @property
    def dice(self) -> Dice:
        if self._dice is None:
            from vttrelay.world.rules.dice import Dice

            self._dice = Dice(self.chance.random)
        return self._dice

    def new_id(self) -> str:
        """A new document id (from the world's generator when it is seeded)."""
        return self.chance.new_id()

    def now_ms(self) -> int:
        """Milliseconds since the epoch, strictly increasing (chat is ordered by timestamp)."""
        now = max(self._clock(), self._last_ms + 1)
        self._last_ms = now
        return now

    def gm_user_id(self, tx: Tx) -> str | None:
        user = documents.gm_user(tx)
        return str(user["_id"]) if user else None

    def metadata(self) -> dict[str, Any]:
        """World id/title, system, tabletop version and modules (the world.json header)."""
        with self.store.transaction() as tx:
            return documents.world_meta(tx)

    def connection_query(self) -> dict[str, str]:
        """The query parameters the module puts on the /relay URL (wire-protocol §2.1)."""
        meta = self.metadata()
        world, system = meta.get("world") or {}, meta.get("system") or {}
        return {
            "id": str(world.get("id", "")),
            "worldId": str(world.get("id", "")),
            "worldTitle": str(world.get("title", "")),
            "foundryVersion": str(meta.get("foundryVersion", "")),
            "systemId": str(system.get("id", "")),
            "systemTitle": str(system.get("title") or system.get("id", "")),
            "systemVersion": str(system.get("version") or "unknown"),
        }

    def player_list(self) -> list[dict[str, Any]]:
        """`player-list` users: `{id, name, role, active}`."""
        with self.store.transaction() as tx:
            users = tx.all("User")
        return [
            {
                "id": u["_id"],
                "name": u.get("name", ""),
                "role": int(u.get("role", 1)),
                "active": u["_id"] in self.online,
            }
            for u in users
        ]

    # Events ---------------------------------------------------------------------------------

    def subscribed(self, channel: str) -> bool:
        return self.subscriptions.get(channel, 0) > 0

    def set_subscription(self, channel: str, count: int) -> None:
        self.subscriptions[channel] = max(0, int(count))

    def send_player_list(self) -> None:
        """Tell the relay the world's users again (after a user was created, changed or
        deleted), so that its stream filters know them at once."""
        if self.sink is not None:
            self.sink({"type": protocol.PLAYER_LIST, "users": self.player_list()})

    def publish(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        """Send queued event frames (still only for channels with subscribers)."""
        sink = self.sink
        if sink is None:
            return
        for frame_type, data in events:
            channel = protocol.EVENT_FRAME_CHANNEL.get(frame_type)
            if channel is not None and self.subscribed(channel):
                sink({"type": frame_type, "data": data})

    # Running actions ------------------------------------------------------------------------

    def context(
        self, tx: Tx | None, user: dict[str, Any] | None, check: TimeLimit | None = None
    ) -> ActionContext:
        return ActionContext(self, tx, user, check)

    @staticmethod
    def _resolve(tx: Tx, ref: object) -> dict[str, Any] | None:
        if ref is None or ref == "":
            return None
        ref = str(ref)
        user = documents.find_user(tx, ref)
        if user is None:
            raise UserNotFound(ref)
        return user

    def resolve_user_ref(self, ref: object) -> dict[str, Any] | None:
        """The User document a request's `userId` names; None for none; UserNotFound."""
        with self.store.transaction() as tx:
            return self._resolve(tx, ref)

    def deadline(self) -> float:
        """When a request arriving now must be over (`monotonic` seconds)."""
        return self._monotonic() + self.time_limit

    def checker(self, deadline: float) -> TimeLimit:
        """The time limit that ends at `deadline` (a check that raises the time-limit
        ActionError once it has passed)."""
        return TimeLimit(deadline, self.time_limit, self._monotonic)

    @staticmethod
    def _check_bounds(tx: Tx) -> None:
        """ActionError if a document this transaction wrote grew past `rules.bounds`."""
        for collection, _, before, after in tx.written():
            problem = bounds.size_problem(collection, len(before or b""), len(after))
            if problem is None and len(after) >= bounds.MIN_BYTES_PAST_EMBEDDED:
                keys = tuple(documents.EMBEDDED.get(collection, {}).values())
                problem = bounds.embedded_problem(
                    collection,
                    keys,
                    orjson.loads(before) if before is not None else None,
                    orjson.loads(after),
                )
            if problem is not None:
                raise ActionError(problem)

    def _run(
        self,
        user_ref: object,
        user: dict[str, Any] | None,
        fn: Callable[[ActionContext], T],
        deadline: float | None = None,
    ) -> T:
        check = self.checker(self.deadline() if deadline is None else deadline)
        with self.store.transaction(check) as tx:
            if user is None:
                user = self._resolve(tx, user_ref)
            ctx = self.context(tx, user)
            result = fn(ctx)
            self._check_bounds(tx)
            collect_document_events(ctx, tx.changes)
        if ctx.selection is not None:
            self.selection = ctx.selection
        for entry in ctx.rolls:
            rolls_rules.add_recent(self.recent_rolls, entry)
        self.publish(ctx.events)
        if ctx.users_changed:
            self.send_player_list()
        return result

    def run_action(
        self,
        user_ref: object,
        handler: Callable[[ActionContext, dict[str, Any]], dict[str, Any]],
        frame: dict[str, Any],
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Resolve the user, run a sync handler in one transaction, commit, then send events.
        Past `deadline` (default: `time_limit` from now) it stops and commits nothing."""
        return self._run(user_ref, None, lambda ctx: handler(ctx, frame), deadline)

    def run_in_transaction(
        self, user: dict[str, Any] | None, fn: Callable[[ActionContext], T]
    ) -> T:
        """Run `fn` in one transaction as `user` (already resolved); events after commit."""
        return self._run(None, user, fn)

    async def handle(self, frame: dict[str, Any], deadline: float | None = None) -> dict[str, Any]:
        """Run one request frame and build its reply frame (never raises). A sync action past
        `deadline` (default `time_limit` from now) stops and commits nothing; an async one stops
        at its next `ctx.checkpoint()` past it."""
        if deadline is None:
            deadline = self.deadline()
        name = frame.get("type")
        head = reply_head(frame)
        spec = self.actions.get(name)
        if spec is None:
            return {**head, "error": f"Unknown action: {name}"}
        user_ref = frame.get("userId") if spec.resolve_user else None
        try:
            if spec.is_async:
                user = self.resolve_user_ref(user_ref)
                ctx = self.context(None, user, self.checker(deadline))
                body = await spec.handler(ctx, frame)
            else:
                body = self.run_action(user_ref, spec.handler, frame, deadline)
        except UserNotFound as exc:
            return {**head, "error": f"User not found: {exc.ref}", "data": None}
        except ActionError as exc:
            if exc.bare:
                return {**head, "error": exc.message}
            return spec.error_reply(frame, exc.message, exc.extra)
        except Exception as exc:  # rolled back (done); answer clearly instead of timing out
            return error_reply(self.actions, frame, exc)
        return {**head, **body}

    # The agent's side ---------------------------------------------------------------------

    async def answer(
        self, frame: dict[str, Any], deadline: float | None = None
    ) -> tuple[str, bytes] | None:
        """A request's reply, encoded: (its type, its JSON). A reply that can't be built or
        encoded becomes an error reply to the request (never a silent timeout); None only when
        not even that can be encoded. `deadline`: as `handle`'s (from the frame's arrival)."""
        try:
            reply = await self.handle(frame, deadline)
        except Exception as exc:  # handle answers failures itself; this is a last resort
            reply = error_reply(self.actions, frame, exc)
        return encode_reply(self.actions, frame, reply)

    def attach(self, relay: str, sink: Callable[[dict[str, Any]], None]) -> None:
        """Connected to `relay` (its base URL): event frames go to `sink` from now on, the GM is
        online, the relay learns the world's users. The module's `wsRelayUrl` setting says
        which relay the world is connected to (scripts read it with
        game.settings.get("foundry-rest-api", "wsRelayUrl"))."""
        with self.store.transaction() as tx:
            gm = documents.gm_user(tx)
            if documents.get_setting(tx, "foundry-rest-api.wsRelayUrl") != relay:
                documents.set_setting(tx, "foundry-rest-api.wsRelayUrl", relay)
        self.online = {gm["_id"]} if gm else set()
        self.sink = sink
        self.send_player_list()

    def detach(self) -> None:
        """The connection ended: no sink, nobody online, no subscriptions (the relay sends its
        counts again after a reconnect)."""
        self.sink = None
        self.online = set()
        self.subscriptions.clear()
