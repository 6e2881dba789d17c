-- The search index (GET /search): one FTS5 row per searchable document, rowid = documents.seq.
-- `name_lc` (the lower-cased name) is the indexed text, with the trigram tokenizer so that any
-- substring of three or more characters is an index lookup. The store keeps it current in the
-- same transaction as every document write.
-- depends: 0001_documents

CREATE VIRTUAL TABLE documents_search USING fts5(
    name_lc,
    name UNINDEXED,
    collection UNINDEXED,
    id UNINDEXED,
    sub_type UNINDEXED,
    img UNINDEXED,
    folder UNINDEXED,
    tokenize = 'trigram'
);

INSERT INTO documents_search (rowid, name_lc, name, collection, id, sub_type, img, folder)
SELECT seq,
       lower(coalesce(json_extract(CAST(data AS TEXT), '$.name'), '')),
       coalesce(json_extract(CAST(data AS TEXT), '$.name'), ''),
       collection,
       id,
       coalesce(json_extract(CAST(data AS TEXT), '$.type'), ''),
       coalesce(json_extract(CAST(data AS TEXT), '$.img'), json_extract(CAST(data AS TEXT), '$.thumbnail'), ''),
       json_extract(CAST(data AS TEXT), '$.folder')
FROM documents
WHERE collection IN ('Actor', 'Item', 'Scene', 'JournalEntry', 'RollTable', 'Cards', 'Macro', 'Playlist');
