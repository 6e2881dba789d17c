"""The embedded world at run time: its store, dice, clock, token selection, event subscriptions,
and the one place where an action runs in a transaction and its events are sent after commit.

The agent feeds request frames to `World.handle` and installs `World.sink` to send event frames;
`World.subscriptions` mirrors the relay's `event-subscription-update` counts.

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
from vttrelay.world import documents, packs
from vttrelay.world.actions import ActionError, UserNotFound, dispatch, load_actions
from vttrelay.world.context import ActionContext
from vttrelay.world.events import collect_document_events
from vttrelay.world.files.store import FileStore
from vttrelay.world.rules import bounds
from vttrelay.world.rules import rolls as rolls_rules
from vttrelay.world.runtime.heavy import HeavyWork
from vttrelay.world.store import Tx, WorldStore

if TYPE_CHECKING:
    from vttrelay.world.dice import Dice

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
        dice: Dice | None = None,
        clock: Callable[[], int] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        time_limit: float = ACTION_TIME_LIMIT,
        files: FileStore | None = None,
    ) -> None:
        self.store = store
        self.files = files  # the file store (`data` and `public`), None: no files
        self._dice = dice
        self._clock = clock or (lambda: int(time.time() * 1000))
        self._monotonic = monotonic  # what time limits are measured with (seconds)
        self.time_limit = time_limit
        self._last_ms = 0
        self.selection: list[str] = []  # the GM's controlled tokens (token uuids)
        self.subscriptions: dict[str, int] = {}
        self.sink: Callable[[dict[str, Any]], None] | None = None
        self.online: set[str] = set()  # ids of users shown as active
        self.recent_rolls: list[dict[str, Any]] = []  # newest first (GET /rolls, /lastroll)
        self.heavy = HeavyWork()  # pictures: off the world's loop
        load_actions()
        packs.register()

    @classmethod
    def open(cls, data_dir: Path, **kwargs: Any) -> World:
        """Open `<data-dir>/world/world.db`, seeding the demo world into a fresh file, and its
        file store `<data-dir>/world/files/`."""
        from vttrelay.world.seed import seed

        store = WorldStore(world_db_path(data_dir))
        if store.is_empty():
            seed(store)
        kwargs.setdefault("files", FileStore(world_dir(data_dir) / FILES_DIR))
        return cls(store, **kwargs)

    def close(self) -> None:
        self.heavy.close()
        if self.files is not None:
            self.files.close()
        self.store.close()

    # Basics ---------------------------------------------------------------------------------

    @property
    def dice(self) -> Dice:
        if self._dice is None:
            from vttrelay.world.dice import Dice

            self._dice = Dice()
        return self._dice

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
        self, tx: Tx | None, user: dict[str, Any] | None, check: Callable[[], None] | None = None
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

    def checker(self, deadline: float) -> Callable[[], None]:
        """A check that raises the time-limit ActionError once `deadline` has passed."""

        def check() -> None:
            if self._monotonic() > deadline:
                raise ActionError(
                    f"The request ran past the world's time limit of {self.time_limit:g} s "
                    "and was stopped: nothing was changed"
                )

        return check

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
        """Answer one request frame (a sync action by `deadline`, default `time_limit` from
        now, or not at all)."""
        return await dispatch(self, frame, self.deadline() if deadline is None else deadline)
