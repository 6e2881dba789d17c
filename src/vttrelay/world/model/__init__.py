"""The world's documents as data: the collections, uuids, embedded collections, defaults and
ids, with no I/O (the store implements `collections.Documents`)."""
