"""The world's document store: SQLite (WAL), one row per top-level document, all-or-nothing
transactions.

A `Tx` buffers every write in memory (as JSON bytes, so each read hands out a private copy) and
reaches SQLite only when the transaction commits, in one SQLite transaction. An exception inside
`WorldStore.transaction()` discards the buffer: nothing was written, so nothing needs undoing, and
a process killed mid-action leaves the database as it was. Only one transaction is open at a time.

Searchable documents (`SEARCHABLE`) also have a row in the FTS5 table `documents_search`
(migration 0002), written in the same SQLite transaction as the document, so the index is never
out of step with the documents; `Tx.search_index` queries it (committed documents only).
Chat messages likewise have rows in the chat index (migration 0003: what `rules.chat` says about
each message: its time, chat type, speaker and audience), so that `Tx.chat_page` filters, counts
and pages them in SQL and reads only the messages of the page.

Each transaction holds SQLite's write lock from its first read to its commit (`BEGIN
IMMEDIATE`), so its reads and writes are one atomic step even against another process on the
same file (a `vttrelay world` command while the world runs): no update is ever lost. Actions are
short and synchronous, so the lock is held for milliseconds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson
from yoyo import get_backend, read_migrations

from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model.collections import name_key
from vttrelay.world.model.documents import Resolved
from vttrelay.world.store import packs

MIGRATIONS_DIR: Final = Path(__file__).parent / "migrations"
# The collections GET /search covers (the module's world index).
SEARCHABLE: Final = frozenset(
    ("Actor", "Item", "Scene", "JournalEntry", "RollTable", "Cards", "Macro", "Playlist")
)

# The collections whose `active` documents (the viewed scene, the running combats) are looked up
# on most requests: the store keeps the seqs of those with a truthy `active` (migration 0004),
# so that `Tx.active` parses only them.
ACTIVE_FLAGGED: Final = frozenset(("Scene", "Combat"))
# The collections whose documents requests name (a user, an actor, a playlist by name): the store
# keeps each one's `name_key` (migration 0005), so that `Tx.named` parses only the matches.
NAME_INDEXED: Final = frozenset(("User", "Actor", "Playlist"))

_Key = tuple[str, str]


@dataclass(frozen=True)
class IndexEntry:
    """One row of the search index."""

    collection: str
    id: str
    name: str
    sub_type: str
    img: str
    folder: str | None


def _index_values(doc: dict[str, Any]) -> tuple[str, str, str, str, str | None]:
    """(name_lc, name, sub_type, img, folder) of a document for the search index."""
    name = doc.get("name")
    name = name if isinstance(name, str) else ""
    sub_type = doc.get("type")
    img = doc.get("img") or doc.get("thumbnail") or ""
    folder = doc.get("folder")
    return (
        name.lower(),
        name,
        sub_type if isinstance(sub_type, str) else "",
        img if isinstance(img, str) else "",
        folder if isinstance(folder, str) else None,
    )


def write_chat_index(conn: Any, seq: int, values: chat_rules.ChatIndexValues) -> None:
    """Write a chat message's rows of the chat index (`conn`: any DB-API connection to the
    world database, inside the caller's transaction; the message has no rows yet)."""
    cursor = conn.cursor()
    cursor.execute(
        "INSERT INTO chat_index (seq, time, chat_type, public, alias, actor, actor_uuid) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            values.time,
            values.chat_type,
            values.audience is None,
            values.alias,
            values.actor,
            values.actor_uuid,
        ),
    )
    cursor.executemany(
        "INSERT INTO chat_audience (user_id, seq) VALUES (?, ?)",
        [(user_id, seq) for user_id in values.audience or ()],
    )


@dataclass(frozen=True)
class Change:
    """One document changed by a transaction. `before`/`after` are None for create/delete."""

    collection: str
    doc_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


def migrate(path: Path) -> None:
    """Create or upgrade the world database at `path` with the yoyo migrations."""
    backend = get_backend(f"sqlite:///{path}")
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with backend.lock():
        backend.apply_migrations(backend.to_apply(migrations))
    backend.connection.close()


class Tx:
    """An open transaction. Reads see this transaction's own writes; others see nothing until
    commit. Every document handed out is a private copy."""

    def __init__(
        self, conn: sqlite3.Connection, checkpoint: Callable[[], None] | None = None
    ) -> None:
        self._conn = conn
        self._checkpoint = checkpoint
        self._writes: dict[_Key, bytes | None] = {}
        self._originals: dict[_Key, bytes | None] = {}
        self._indexed: dict[_Key, tuple[str, str, str, str, str | None]] = {}  # at put time
        self._chat_indexed: dict[_Key, chat_rules.ChatIndexValues] = {}  # at put time
        self._active: dict[_Key, bool] = {}  # at put time, for ACTIVE_FLAGGED
        self._names: dict[_Key, str] = {}  # name_key at put time, for NAME_INDEXED

    def checkpoint(self) -> None:
        """Let the transaction's owner stop it here (its time limit: the owner's callable
        raises, and the transaction commits nothing). Every read and write passes here; a long
        loop that does neither calls it itself."""
        if self._checkpoint is not None:
            self._checkpoint()

    def _load(self, key: _Key) -> bytes | None:
        self.checkpoint()
        row = self._conn.execute(
            "SELECT data FROM documents WHERE collection = ? AND id = ?", key
        ).fetchone()
        return bytes(row[0]) if row else None

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        """The document, or None."""
        key = (collection, doc_id)
        raw = self._writes[key] if key in self._writes else self._load(key)
        return orjson.loads(raw) if raw is not None else None

    def all(self, collection: str) -> list[dict[str, Any]]:
        """Every document of a collection, in insertion order."""
        self.checkpoint()
        out: list[dict[str, Any]] = []
        rows = self._conn.execute(
            "SELECT id, data FROM documents WHERE collection = ? ORDER BY seq", (collection,)
        )
        for doc_id, data in rows:
            key = (collection, doc_id)
            raw = self._writes.get(key, data)
            if raw is not None:
                out.append(orjson.loads(raw))
        for key, raw in self._writes.items():
            if key[0] == collection and raw is not None and self._originals.get(key) is None:
                out.append(orjson.loads(raw))
        return out

    def _indexed_matches(
        self, collection: str, seqs_sql: str, args: tuple[Any, ...], wrote_match: dict[_Key, Any]
    ) -> list[dict[str, Any]]:
        """The documents of `collection` that a side index says match, in insertion order, as
        this transaction sees them: committed rows whose seq `seqs_sql` (a SELECT of seqs, with
        `args`) returns, unless this transaction wrote them; and the documents it wrote for which
        `wrote_match` (key -> truthy, taken at put time) holds. Only those are parsed."""
        self.checkpoint()
        pending = {key[1]: raw for key, raw in self._writes.items() if key[0] == collection}
        marks = ",".join("?" * len(pending))
        rows = self._conn.execute(
            f"SELECT id, data FROM documents WHERE collection = ? AND (seq IN ({seqs_sql}) "
            f"OR id IN ({marks})) ORDER BY seq",
            (collection, *args, *pending),
        )
        out: list[dict[str, Any]] = []
        for doc_id, data in rows:
            raw = pending.get(doc_id, data)
            if raw is not None and (doc_id not in pending or wrote_match[(collection, doc_id)]):
                out.append(orjson.loads(raw))
        for doc_id, raw in pending.items():
            key = (collection, doc_id)
            if raw is not None and self._originals.get(key) is None and wrote_match[key]:
                out.append(orjson.loads(raw))
        return out

    def active(self, collection: str) -> list[dict[str, Any]]:
        """The documents of an `ACTIVE_FLAGGED` collection whose `active` is truthy, in insertion
        order (as `[d for d in all(collection) if d.get("active")]`), parsing only those and the
        ones this transaction wrote."""
        if collection not in ACTIVE_FLAGGED:
            raise ValueError(f"{collection} documents are not indexed by `active`")
        return self._indexed_matches(
            collection, "SELECT seq FROM active_documents", (), self._active
        )

    def named(self, collection: str, name: str) -> list[dict[str, Any]]:
        """The documents of a `NAME_INDEXED` collection whose name is `name` case-insensitively
        (`name_key`), in insertion order, parsing only those and the ones this transaction
        wrote."""
        if collection not in NAME_INDEXED:
            raise ValueError(f"{collection} documents are not indexed by name")
        wanted = name.casefold()
        matches = {key: found == wanted for key, found in self._names.items()}
        return self._indexed_matches(
            collection, "SELECT seq FROM document_names WHERE name_key = ?", (wanted,), matches
        )

    def ids(self, collection: str) -> list[str]:
        """The ids of every document of a collection, in insertion order (as `all`, without
        reading or parsing the documents)."""
        self.checkpoint()
        out = [
            doc_id
            for (doc_id,) in self._conn.execute(
                "SELECT id FROM documents WHERE collection = ? ORDER BY seq", (collection,)
            )
            if self._writes.get((collection, doc_id), b"") is not None
        ]
        for key, raw in self._writes.items():
            if key[0] == collection and raw is not None and self._originals.get(key) is None:
                out.append(key[1])
        return out

    def put(self, collection: str, doc: dict[str, Any]) -> None:
        """Insert or replace a document by its `_id`."""
        doc_id = doc.get("_id")
        if not isinstance(doc_id, str) or not doc_id:
            raise ValueError(f"a {collection} document needs a string _id")
        key = (collection, doc_id)
        self.checkpoint()
        if key not in self._originals:
            self._originals[key] = self._load(key)
        self._writes[key] = orjson.dumps(doc)
        if collection in SEARCHABLE:
            self._indexed[key] = _index_values(doc)
        elif collection == "ChatMessage":
            self._chat_indexed[key] = chat_rules.index_values(doc)
        if collection in ACTIVE_FLAGGED:
            self._active[key] = bool(doc.get("active"))
        if collection in NAME_INDEXED:
            self._names[key] = name_key(doc)

    def delete(self, collection: str, doc_id: str) -> None:
        """Delete a document (no-op if it does not exist)."""
        key = (collection, doc_id)
        self.checkpoint()
        if key not in self._originals:
            self._originals[key] = self._load(key)
        self._writes[key] = None

    def compendium(self, uuid: str) -> Resolved | None:
        """A `Compendium.` uuid's document, read-only, from the packs (`store.packs`)."""
        return packs.resolve(self, uuid)

    def written(self) -> Iterator[tuple[str, str, bytes | None, bytes]]:
        """(collection, id, JSON before, JSON after) of each document this transaction wrote
        and did not delete, unparsed (`before` is None for a new document)."""
        for (collection, doc_id), raw in self._writes.items():
            if raw is not None:
                yield collection, doc_id, self._originals.get((collection, doc_id)), raw

    def changes(self) -> list[Change]:
        """The documents this transaction changed so far, in first-write order."""
        out: list[Change] = []
        for key, raw in self._writes.items():
            before = self._originals.get(key)
            if before == raw:
                continue
            out.append(
                Change(
                    key[0],
                    key[1],
                    orjson.loads(before) if before is not None else None,
                    orjson.loads(raw) if raw is not None else None,
                )
            )
        return out

    def search_index(
        self,
        *,
        match: str | None = None,
        like: str | None = None,
        collection: str | None = None,
        sub_type: str | None = None,
    ) -> list[IndexEntry]:
        """Rows of the search index, by name: `match` is a substring (3+ characters) looked up
        in the trigram index; `like` a LIKE pattern (escape `\\`) on the lower-cased name;
        `collection` and `sub_type` (case-insensitive) narrow it."""
        self.checkpoint()
        where: list[str] = []
        args: list[str] = []
        if match is not None:
            where.append("documents_search MATCH ?")
            args.append('name_lc : "' + match.replace('"', '""') + '"')
        if like is not None:
            where.append("name_lc LIKE ? ESCAPE '\\'")
            args.append(like)
        if collection is not None:
            where.append("collection = ?")
            args.append(collection)
        if sub_type is not None:
            where.append("lower(sub_type) = ?")
            args.append(sub_type.lower())
        sql = "SELECT collection, id, name, sub_type, img, folder FROM documents_search"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [
            IndexEntry(*row) for row in self._conn.execute(sql + " ORDER BY name_lc, name", args)
        ]

    def chat_page(
        self,
        *,
        viewer: str | None,
        chat_type: int | None,
        speaker: str | None,
        offset: int,
        limit: int,
    ) -> tuple[int, list[dict[str, Any]]]:
        """A page of chat messages, newest first (by `rules.chat.message_time`, then latest
        written first), and how many messages match in all: those `viewer` sees (every one for
        None, a game master; see `documents.can_see_message`), of chat type `chat_type` and said
        by `speaker` (alias, actor id or actor uuid; see `rules.chat.speaker_keys`) when given.
        The count and the page come from the chat index; only the page's messages are read and
        parsed, and a page stops at `rules.chat.PAGE_BYTES` of messages (it may hold fewer than
        `limit`). Committed messages only (the chat list's transaction writes nothing)."""
        self.checkpoint()
        where: list[str] = []
        args: list[Any] = []
        if chat_type is not None:
            where.append("c.chat_type = ?")
            args.append(chat_type if chat_rules.fits_int64(chat_type) else None)
        if speaker is not None:
            where.append("? IN (c.alias, c.actor, c.actor_uuid)")
            args.append(speaker)
        filters = "".join(f" AND {w}" for w in where)
        conn = self._conn
        if viewer is None:
            (total,) = conn.execute(
                f"SELECT COUNT(*) FROM chat_index c WHERE 1{filters}", args
            ).fetchone()
            visible = "1"
            page_args = args
        else:
            # Disjoint: a public message has no audience rows.
            (total,) = conn.execute(
                f"SELECT (SELECT COUNT(*) FROM chat_index c WHERE c.public{filters}) + "
                "(SELECT COUNT(*) FROM chat_audience a JOIN chat_index c ON c.seq = a.seq "
                f"WHERE a.user_id = ?{filters})",
                [*args, viewer, *args],
            ).fetchone()
            visible = (
                "(c.public OR EXISTS "
                "(SELECT 1 FROM chat_audience a WHERE a.user_id = ? AND a.seq = c.seq))"
            )
            page_args = [viewer, *args]
        if offset >= total or limit <= 0:
            return total, []
        seqs = [
            seq
            for (seq,) in conn.execute(
                f"SELECT c.seq FROM chat_index c WHERE {visible}{filters} "
                "ORDER BY c.time DESC, c.seq DESC LIMIT ? OFFSET ?",
                [*page_args, min(limit, total), offset],
            )
        ]
        marks = ",".join("?" * len(seqs))
        sizes = dict(
            conn.execute(f"SELECT seq, length(data) FROM documents WHERE seq IN ({marks})", seqs)
        )
        seqs = seqs[: chat_rules.page_cut([sizes[seq] for seq in seqs])]
        marks = ",".join("?" * len(seqs))
        data = dict(conn.execute(f"SELECT seq, data FROM documents WHERE seq IN ({marks})", seqs))
        return total, [orjson.loads(data[seq]) for seq in seqs]

    def _commit(self) -> None:
        """Write the buffer inside the open SQLite transaction (the caller commits), keeping
        the search index in step."""
        conn = self._conn
        for (collection, doc_id), raw in self._writes.items():
            if raw is None:
                row = conn.execute(
                    "DELETE FROM documents WHERE collection = ? AND id = ? RETURNING seq",
                    (collection, doc_id),
                ).fetchone()
            else:
                row = conn.execute(
                    "INSERT INTO documents (collection, id, data) VALUES (?, ?, ?) "
                    "ON CONFLICT (collection, id) DO UPDATE SET data = excluded.data "
                    "RETURNING seq",
                    (collection, doc_id, raw),
                ).fetchone()
            if row is None:
                continue
            if collection in ACTIVE_FLAGGED:
                conn.execute("DELETE FROM active_documents WHERE seq = ?", (row[0],))
                if raw is not None and self._active[(collection, doc_id)]:
                    conn.execute("INSERT INTO active_documents (seq) VALUES (?)", (row[0],))
            if collection in NAME_INDEXED:
                conn.execute("DELETE FROM document_names WHERE seq = ?", (row[0],))
                if raw is not None:
                    conn.execute(
                        "INSERT INTO document_names (seq, name_key) VALUES (?, ?)",
                        (row[0], self._names[(collection, doc_id)]),
                    )
            if collection == "ChatMessage":
                conn.execute("DELETE FROM chat_index WHERE seq = ?", (row[0],))
                conn.execute("DELETE FROM chat_audience WHERE seq = ?", (row[0],))
                if raw is not None:
                    write_chat_index(conn, row[0], self._chat_indexed[(collection, doc_id)])
                continue
            if collection not in SEARCHABLE:
                continue
            conn.execute("DELETE FROM documents_search WHERE rowid = ?", (row[0],))
            if raw is not None:
                key = (collection, doc_id)
                name_lc, name, sub_type, img, folder = self._indexed[key]
                conn.execute(
                    "INSERT INTO documents_search "
                    "(rowid, name_lc, name, collection, id, sub_type, img, folder) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (row[0], name_lc, name, collection, doc_id, sub_type, img, folder),
                )


class WorldStore:
    """The world's SQLite file. Open it once per process; `transaction()` is the only way in."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 5000) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        migrate(path)
        self.path = path
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        self._lock = threading.Lock()
        self._owner: int | None = None

    @contextmanager
    def transaction(self, checkpoint: Callable[[], None] | None = None) -> Iterator[Tx]:
        """Open a transaction: commits at exit, discards everything on an exception.
        `checkpoint` is called at each read and write (`Tx.checkpoint`) and right before the
        commit: when it raises, the transaction commits nothing."""
        if self._owner == threading.get_ident():
            raise RuntimeError("a world transaction is already open in this thread")
        with self._lock:
            self._owner = threading.get_ident()
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    tx = Tx(self._conn, checkpoint)
                    yield tx
                    tx.checkpoint()
                    tx._commit()
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            finally:
                self._owner = None

    def is_empty(self) -> bool:
        """True if the store holds no document at all (a fresh file)."""
        return self._conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is None

    def backup_to(self, path: Path) -> None:
        """Copy the whole store, as it is now, into a new SQLite file at `path` (a snapshot
        `restore_from` puts back)."""
        with self._lock:
            target = sqlite3.connect(path)
            try:
                self._conn.backup(target)
            finally:
                target.close()

    def restore_from(self, path: Path) -> None:
        """Replace everything the store holds by the snapshot at `path` (`backup_to`), in
        place: this connection stays open, its next transaction sees the snapshot."""
        with self._lock:
            source = sqlite3.connect(path)
            try:
                source.backup(self._conn)
            finally:
                source.close()

    def latest_chat_time(self) -> int:
        """The time of the newest chat message (milliseconds since the epoch; 0: none)."""
        row = self._conn.execute("SELECT max(time) FROM chat_index").fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        self._conn.close()
