"""The chat index (GET /chat): one row per ChatMessage, rowid = documents.seq, with what
`rules.chat.index_values` says about it: the time a list orders by, the chat type number, the
speaker's alias, actor id and actor uuid, and `public` (not a whisper); `chat_audience` holds
the users who see each whisper besides game masters. The store keeps both current in the same
transaction as every document write; this migration fills them for the messages already stored,
with the same function.
"""

from typing import Any

from yoyo import step

__depends__ = {"0002_search"}


def _backfill(conn: Any) -> None:
    import orjson

    from vttrelay.world.model.chat import index_values
    from vttrelay.world.store.sqlite import write_chat_index

    cursor = conn.cursor()
    cursor.execute("SELECT seq, data FROM documents WHERE collection = 'ChatMessage'")
    for seq, data in cursor.fetchall():
        write_chat_index(conn, seq, index_values(orjson.loads(data)))


steps = [
    step(
        """
        CREATE TABLE chat_index (
            seq INTEGER PRIMARY KEY,     -- documents.seq of the message
            time NUMERIC NOT NULL,       -- rules.chat.message_time
            chat_type INTEGER,           -- rules.chat.chat_type_of (NULL: out of range)
            public INTEGER NOT NULL,     -- 1: not a whisper, everyone sees it
            alias TEXT,                  -- rules.chat.speaker_keys
            actor TEXT,
            actor_uuid TEXT
        )
        """,
        "DROP TABLE chat_index",
    ),
    step("CREATE INDEX chat_index_time ON chat_index (time, seq)", "DROP INDEX chat_index_time"),
    step(
        """
        CREATE TABLE chat_audience (
            user_id TEXT NOT NULL,       -- rules.chat.message_audience
            seq INTEGER NOT NULL,
            PRIMARY KEY (user_id, seq)
        ) WITHOUT ROWID
        """,
        "DROP TABLE chat_audience",
    ),
    step("CREATE INDEX chat_audience_seq ON chat_audience (seq)", "DROP INDEX chat_audience_seq"),
    step(_backfill),
]
