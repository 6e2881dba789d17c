"""The context an action handler runs in: the open transaction, the acting user, dice, the
clock, chat-message creation, recorded rolls, token selection and event emission.

Events are queued here and sent only after the transaction commits (and only for channels that
have subscribers); a failed action therefore emits nothing. A new token selection is likewise
applied only after commit, and so are rolls added to the world's recent-rolls list: every chat
message with rolls records its first roll there (and on the roll stream), as the module does
while someone subscribes to rolls.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vttrelay import protocol
from vttrelay.world.errors import ActionError, DiceError
from vttrelay.world.model import documents
from vttrelay.world.rules import rolls as rolls_rules
from vttrelay.world.runtime.heavy import OverTime, WorkerLost
from vttrelay.world.store.sqlite import Tx

if TYPE_CHECKING:
    from vttrelay.world.files.store import FileStore
    from vttrelay.world.rules.dice import Dice, Roll
    from vttrelay.world.runtime.chance import Chance
    from vttrelay.world.runtime.heavy import HeavyWork
    from vttrelay.world.runtime.limit import TimeLimit

T = TypeVar("T")

WORKER_LOST = "The world's drawing process stopped while it drew this picture: please try again"


class WorldState(Protocol):
    """What a context reads of the world it runs in (`World` is one): its dice, chance, clock, users
    online, subscriptions, recent rolls, token selection, heavy-work process and file store."""

    selection: list[str]
    online: set[str]
    recent_rolls: list[dict[str, Any]]
    heavy: HeavyWork
    files: FileStore | None

    @property
    def dice(self) -> Dice: ...

    def now_ms(self) -> int: ...

    def new_id(self) -> str: ...

    @property
    def chance(self) -> Chance: ...

    def gm_user_id(self, tx: Tx) -> str | None: ...

    def subscribed(self, channel: str) -> bool: ...

    def run_in_transaction(
        self, user: dict[str, Any] | None, fn: Callable[[ActionContext], T]
    ) -> T: ...


# Chat type numbers (spec §2.2).
CHAT_OOC, CHAT_IC, CHAT_EMOTE, CHAT_WHISPER, CHAT_ROLL = range(5)


def chat_type_for(
    explicit: int | None, *, has_rolls: bool, whispered: bool, has_actor: bool
) -> int:
    """Explicit type if given, else 4 with rolls, 3 if whispered, 1 if an actor speaks, else 0."""
    if explicit is not None:
        return explicit
    if has_rolls:
        return CHAT_ROLL
    if whispered:
        return CHAT_WHISPER
    return CHAT_IC if has_actor else CHAT_OOC


def normalize_speaker(speaker: dict[str, Any] | None) -> dict[str, Any]:
    """`{scene, actor, token}` (ids or null), plus `alias` only when set."""
    speaker = speaker or {}
    out: dict[str, Any] = {
        "scene": speaker.get("scene"),
        "actor": speaker.get("actor"),
        "token": speaker.get("token"),
    }
    if speaker.get("alias"):
        out["alias"] = speaker["alias"]
    return out


class ActionContext:
    """Everything a handler may touch. Handlers are synchronous and do no I/O besides this."""

    def __init__(
        self,
        world: WorldState,
        tx: Tx | None,
        user: dict[str, Any] | None,
        check: TimeLimit | None = None,
    ) -> None:
        self._world = world
        self._tx = tx
        self._check = check  # an async handler's time limit (a sync one's is its tx's)
        self.user = user
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.selection: list[str] | None = None  # a new selection (token uuids), set by /select
        self.rolls: list[dict[str, Any]] = []  # recent-rolls entries, added after commit
        self.users_changed = False  # set by the user actions: the relay gets a new player-list

    # The transaction -----------------------------------------------------------------------

    @property
    def tx(self) -> Tx:
        if self._tx is None:
            raise RuntimeError("no open transaction: async handlers use ctx.transact()")
        return self._tx

    def checkpoint(self) -> None:
        """Stop here if the action is past its time limit (an ActionError; nothing commits).
        For long loops that neither read nor write the store (each store call checks too), also
        in an async handler's work outside a transaction (`heavy` work has a check of its own)."""
        if self._tx is not None:
            self._tx.checkpoint()
        elif self._check is not None:
            self._check()

    def transact(self, fn: Callable[[ActionContext], T]) -> T:
        """For async handlers: run `fn` synchronously in one transaction of its own, with the same
        user; its events are sent after it commits."""
        return self._world.run_in_transaction(self.user, fn)

    async def heavy(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """For async handlers: `fn(*args, **kwargs, checkpoint=...)` in the world's heavy-work
        process (`runtime.heavy`), off its loop and the relay's: `fn` is a module-level
        function of plain data (documents, paths, numbers), never the store. Its `checkpoint`
        stops it past this action's time limit (the time-limit ActionError here); a worker
        that dies under it is an ActionError too."""
        limit = self._check
        try:
            return await self._world.heavy.run(
                fn, *args, seconds=None if limit is None else limit.left(), **kwargs
            )
        except OverTime:
            assert limit is not None  # no deadline, no OverTime
            raise limit.error() from None
        except WorkerLost:
            raise ActionError(WORKER_LOST) from None

    @property
    def dice(self) -> Dice:
        return self._world.dice

    def roll(self, formula: str) -> Roll:
        """Roll `formula` with the world's dice; a formula the dice refuse is the request's
        error (an ActionError with the dice's message)."""
        try:
            return self._world.dice.roll(formula)
        except DiceError as exc:
            raise ActionError(str(exc)) from exc

    @property
    def files(self) -> FileStore | None:
        """The world's file store (files actions, pictures of uploaded images)."""
        return self._world.files

    def now_ms(self) -> int:
        return self._world.now_ms()

    def new_id(self) -> str:
        """A new document id (the world's: reproducible when the world is seeded)."""
        return self._world.new_id()

    @property
    def random(self) -> random.Random:
        """The world's one generator (`runtime.chance`): every draw an action makes besides
        dice and ids (which use it too)."""
        return self._world.chance.random

    @property
    def acting_user_id(self) -> str | None:
        """The user the action runs as: the given user, else the world's GM."""
        if self.user is not None:
            return str(self.user["_id"])
        return self._world.gm_user_id(self.tx)

    def is_online(self, user_id: str) -> bool:
        """True if the user is connected (the GM the agent runs as, while connected)."""
        return user_id in self._world.online

    def setting(self, key: str, default: Any = None) -> Any:
        return documents.get_setting(self.tx, key, default)

    # Events ---------------------------------------------------------------------------------

    def wants(self, frame_type: str) -> bool:
        """True if someone subscribes to the channel of this event frame type."""
        channel = protocol.EVENT_FRAME_CHANNEL.get(frame_type)
        return channel is not None and self._world.subscribed(channel)

    def emit(self, frame_type: str, data: dict[str, Any]) -> None:
        """Queue an event frame; sent after commit, only if its channel has subscribers."""
        if self.wants(frame_type):
            self.events.append((frame_type, data))

    # Chat -----------------------------------------------------------------------------------

    def create_chat_message(
        self,
        *,
        content: str,
        speaker: dict[str, Any] | None = None,
        flavor: str = "",
        rolls: Iterable[dict[str, Any]] = (),
        whisper: Iterable[str] = (),
        chat_type: int | None = None,
        msg_type: str = "base",
        author: dict[str, Any] | None = None,
        flags: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a chat message, queue its events, return its 12-key API shape (§4)."""
        tx = self.tx
        now = self.now_ms()
        rolls = list(rolls)
        whisper = list(whisper)
        spk = normalize_speaker(speaker)
        if author is not None:
            author_id = author.get("_id") or author.get("id")
        else:
            author_id = self.acting_user_id
        all_flags = dict(flags or {})
        vtt = dict(all_flags.get("vttrelay") or {})
        vtt["chatType"] = chat_type_for(
            chat_type, has_rolls=bool(rolls), whispered=bool(whisper), has_actor=bool(spk["actor"])
        )
        all_flags["vttrelay"] = vtt
        doc: dict[str, Any] = {
            "_id": self.new_id(),
            "type": msg_type,
            "system": {},
            "content": content,
            "speaker": spk,
            "author": author_id,
            "timestamp": now,
            "flavor": flavor,
            "whisper": whisper,
            "blind": False,
            "rolls": rolls,
            "sound": None,
            "emote": vtt["chatType"] == CHAT_EMOTE,
            "flags": all_flags,
            "_stats": documents.new_stats(now, author_id),
        }
        tx.put("ChatMessage", doc)
        message = documents.message_to_api(doc, documents.users_by_id(tx))
        self.emit("chat-event", {"eventType": "create", "data": message})
        if rolls:
            self.record_roll(
                rolls_rules.message_entry(
                    doc["_id"],
                    user=message["author"],
                    speaker=spk,
                    flavor=flavor,
                    first_roll=rolls[0],
                    timestamp=now,
                )
            )
        return message

    # Rolls ----------------------------------------------------------------------------------

    def record_roll(self, entry: dict[str, Any], *, emit: bool = True) -> None:
        """Add a roll to the world's recent-rolls list (after commit) and, unless `emit` is
        False, send it on the roll stream as a `roll-data` event."""
        self.rolls.append(entry)
        if emit:
            self.emit("roll-data", entry)

    def recent_rolls(self) -> list[dict[str, Any]]:
        """The world's recent rolls, newest first (without this action's own)."""
        return list(self._world.recent_rolls)

    # Token selection ------------------------------------------------------------------------

    def current_selection(self) -> list[str]:
        """The selected token uuids (including a change made earlier in this action)."""
        return list(self.selection if self.selection is not None else self._world.selection)

    def select(self, token_uuids: list[str]) -> None:
        """Replace the selection (applied after commit)."""
        self.selection = list(dict.fromkeys(token_uuids))

    def selected_tokens(self) -> list[dict[str, Any]]:
        """The GM's controlled tokens on the active scene, in selection order."""
        scene = documents.active_scene(self.tx)
        if scene is None:
            return []
        by_uuid = {
            documents.token_uuid(scene["_id"], t["_id"]): t for t in scene.get("tokens") or ()
        }
        return [by_uuid[u] for u in self.current_selection() if u in by_uuid]
