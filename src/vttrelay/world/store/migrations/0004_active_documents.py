"""The active documents: the seqs of the Scene and Combat documents (`store.ACTIVE_FLAGGED`)
whose `active` is truthy, so that the viewed scene and the running combats, looked up on most
requests, are found without parsing every scene and combat. The store keeps the table current in
the same transaction as every document write; this migration fills it for the documents already
stored, by the same test (`bool(doc.get("active"))`).
"""

from typing import Any

from yoyo import step

__depends__ = {"0003_chat_index"}


def _backfill(conn: Any) -> None:
    import orjson

    from vttrelay.world.store.sqlite import ACTIVE_FLAGGED

    cursor = conn.cursor()
    marks = ",".join("?" * len(ACTIVE_FLAGGED))
    cursor.execute(
        f"SELECT seq, data FROM documents WHERE collection IN ({marks})", sorted(ACTIVE_FLAGGED)
    )
    active = [(seq,) for seq, data in cursor.fetchall() if orjson.loads(data).get("active")]
    cursor.executemany("INSERT INTO active_documents (seq) VALUES (?)", active)


steps = [
    step(
        "CREATE TABLE active_documents (seq INTEGER PRIMARY KEY)  -- documents.seq",
        "DROP TABLE active_documents",
    ),
    step(_backfill),
]
