-- The embedded world's documents: one row per top-level document (User, Actor, Scene,
-- ChatMessage, Combat, Setting). Embedded documents (items, effects, tokens) live inside their
-- parent's JSON. `seq` keeps insertion order; a replace keeps the original seq.
-- depends:

CREATE TABLE documents (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    data BLOB NOT NULL,              -- the document as JSON (orjson)
    UNIQUE (collection, id)
);
CREATE INDEX documents_collection ON documents (collection, seq);
