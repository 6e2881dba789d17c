"""The name index: for each User, Actor and Playlist document (`store.NAME_INDEXED`), its
`name_key` (the case-folded name), so that a request naming one is answered without
parsing every document of the collection. The store keeps the table current in the same
transaction as every document write; this migration fills it for the documents already stored,
with the same function.
"""

from typing import Any

from yoyo import step

__depends__ = {"0004_active_documents"}


def _backfill(conn: Any) -> None:
    import orjson

    from vttrelay.world.model.collections import name_key
    from vttrelay.world.store.sqlite import NAME_INDEXED

    cursor = conn.cursor()
    marks = ",".join("?" * len(NAME_INDEXED))
    cursor.execute(
        f"SELECT seq, data FROM documents WHERE collection IN ({marks})", sorted(NAME_INDEXED)
    )
    names = [(seq, name_key(orjson.loads(data))) for seq, data in cursor.fetchall()]
    cursor.executemany("INSERT INTO document_names (seq, name_key) VALUES (?, ?)", names)


steps = [
    step(
        "CREATE TABLE document_names (seq INTEGER PRIMARY KEY, name_key TEXT NOT NULL)",
        "DROP TABLE document_names",
    ),
    step(
        "CREATE INDEX document_names_key ON document_names (name_key)",
        "DROP INDEX document_names_key",
    ),
    step(_backfill),
]
