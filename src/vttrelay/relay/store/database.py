"""The relay store's connection layer: SQLite (one file, the default) or PostgreSQL (a server that
every relay instance shares), behind one small interface so that the store (`store/__init__.py`)
and `accounts/` (pair_requests.py, key_requests.py, ...) write each statement once.

- Statements are written in the dialect both engines share, with `?` placeholders; rows are
  read by column name (`row["id"]`).
- `transaction()` is one write transaction that runs alone, committed when the block ends and
  rolled back if it raises: SQLite's `BEGIN IMMEDIATE`; on PostgreSQL a transaction-scoped
  advisory lock taken first, so a read-then-write (redeem a pairing code, hand out a key once)
  is never interleaved with another instance's, exactly as on SQLite.
- `one`, `all` and `run` are single statements outside a transaction (autocommit).
- The schema of both is the one yoyo migration set in `migrations/` (`migrate`).

Everything here is blocking I/O. The relay never calls it on its request hot path (keys come
from `auth.KeyCache`, usage is batched) and runs its other store calls in a worker thread
(`asyncio.to_thread`), so a database across the network never stalls the event loop.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from yoyo import get_backend, read_migrations

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
# The key of the PostgreSQL advisory lock that serialises the store's write transactions.
WRITE_LOCK = 0x76747472656C6179  # "vttrelay"


class Row(Protocol):
    """A result row, read by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


class Cursor(Protocol):
    """What `Connection.execute` returns."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """The connection a transaction yields: statements with `?` placeholders."""

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


class Database(Protocol):
    """SQLite or PostgreSQL, as `RelayStore` uses it."""

    url: str

    def transaction(self) -> AbstractContextManager[Connection]: ...

    def one(self, sql: str, args: Sequence[Any] = ()) -> Any: ...

    def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]: ...

    def run(self, sql: str, args: Sequence[Any] = ()) -> int: ...

    def close(self) -> None: ...


def is_postgres(target: str | Path) -> bool:
    """Whether a `--database` value names a PostgreSQL server (else it is a SQLite file)."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def open_database(target: str | Path) -> Database:
    """Open (creating or upgrading its schema first) the database a `--database` value names:
    a `postgresql://user:password@host:port/dbname` URL, or the path of a SQLite file."""
    if is_postgres(target):
        return PostgresDatabase(str(target))
    return SqliteDatabase(Path(target))


def migrate(url: str) -> None:
    """Create or upgrade the schema (yoyo URL); concurrent starts wait for yoyo's lock."""
    backend = get_backend(url)
    migrations = read_migrations(str(MIGRATIONS_DIR))
    try:
        with backend.lock():
            backend.apply_migrations(backend.to_apply(migrations))
    finally:
        backend.connection.close()


# SQLite ------------------------------------------------------------------------------------------


class SqliteDatabase:
    """One SQLite file (WAL) and one connection shared by threads under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = "sqlite:///" + str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        migrate(self.url)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchone()

    def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self._lock:
            return self._db.execute(sql, tuple(args)).rowcount

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """BEGIN IMMEDIATE: other processes sharing the file (the CLI beside a running relay)
        wait for it (busy timeout)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise


# PostgreSQL --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """A statement with `?` placeholders as psycopg's `%s` ones (a literal `%` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _PgConnection:
    """A psycopg connection seen through `Connection`: `?` placeholders, rows as dicts."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor:
        cursor: Cursor = self._conn.execute(to_pyformat(sql), tuple(args))
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(to_pyformat(sql), [tuple(r) for r in rows])


class PostgresDatabase:
    """A PostgreSQL database through a small psycopg connection pool (threads take turns;
    connections broken by a server restart are replaced when next taken)."""

    def __init__(self, url: str, max_connections: int = 4, connect_timeout: float = 10.0) -> None:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url = url
        libpq_url = "postgresql://" + url.split("://", 1)[1]
        migrate("postgresql+psycopg://" + url.split("://", 1)[1])
        self._pool = ConnectionPool(
            libpq_url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row},
            check=ConnectionPool.check_connection,
            timeout=connect_timeout,
            name="vttrelay-store",
            open=False,
        )
        self._pool.open(wait=True, timeout=connect_timeout)

    def close(self) -> None:
        self._pool.close()

    def one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._pool.connection() as conn:
            return conn.execute(to_pyformat(sql), tuple(args)).fetchone()

    def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._pool.connection() as conn:
            return conn.execute(to_pyformat(sql), tuple(args)).fetchall()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self._pool.connection() as conn:
            rowcount: int = conn.execute(to_pyformat(sql), tuple(args)).rowcount
            return rowcount

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction holding the store's advisory write lock (released at its end)."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield _PgConnection(conn)
