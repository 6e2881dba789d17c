"""The world's documents as data: the collections, uuids, embedded collections, token deltas,
chat-message facts, defaults and ids, with no I/O (the store implements `documents.Documents`)."""
