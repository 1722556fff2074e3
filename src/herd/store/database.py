"""Database engines, units of work and migrations.

SQLite is the embedded default: WAL journal, a busy timeout, and write units of
work opened with ``BEGIN IMMEDIATE`` so that a read-then-write transaction never
fails on a lock upgrade. Reads use ordinary deferred transactions, so GETs run
in parallel with writers. PostgreSQL (psycopg 3) uses one pool for both; its reads run
without BEGIN and ROLLBACK (autocommit: each statement its own snapshot, as under READ
COMMITTED inside a transaction).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import (
    ArgumentError,
    DisconnectionError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from herd.errors import DatabaseUnavailable
from herd.json_types import JsonValue
from herd.store import member_cache, member_revisions, size_history
from herd.store.member_cache import MemberCache

# Session, Connection and IntegrityError are named here so that the API and the engine can
# annotate with them and answer a constraint's refusal without importing SQLAlchemy.
__all__ = [
    "MIGRATIONS_DIR",
    "SQLITE_SYNCHRONOUS",
    "Connection",
    "Database",
    "IntegrityError",
    "Session",
    "refresh_for_update",
]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
#: the ``PRAGMA synchronous`` levels herd accepts (both durable across process crashes in WAL)
SQLITE_SYNCHRONOUS = ("NORMAL", "FULL")
#: PostgreSQL: a pooled connection idle for longer than this is pinged before use
PING_AFTER_IDLE = 1.0
#: members (over all clusters) a process keeps in memory between decisions
DEFAULT_MEMBER_CACHE = 1_000_000


def _normalise_url(url: str) -> str:
    # psycopg 3 is the only PostgreSQL driver herd ships with.
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    if url.startswith("postgres://"):
        return "postgresql+psycopg://" + url[len("postgres://") :]
    return url


def _json_text(value: object) -> str:
    """JSON columns' text: orjson (a large share of bulk writes' time went to the stdlib
    encoder), with the stdlib for what orjson refuses (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value)


def _json_value(text: str | bytes) -> JsonValue:
    """JSON columns' values: orjson, with the stdlib for what orjson refuses to read.

    orjson refuses the escape of a lone UTF-16 surrogate (``"\\ud800"``), which the
    stdlib writes (above). The API refuses such strings now (api/input_guard.py), but a
    row stored before must not fail every read of it (``GET /v1/actions`` was a 500 for
    every later request): it is read with each lone surrogate replaced by U+FFFD, a
    character every encoder and every client takes.
    """
    try:
        value: JsonValue = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _without_surrogates(json.loads(text))
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    return value


def _sqlite_engine(url: str, *, immediate: bool, synchronous: str) -> Engine:
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        pool_size=32,
        max_overflow=32,
        json_serializer=_json_text,
        json_deserializer=_json_value,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        # Take transaction control away from pysqlite so that BEGIN is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    """Check a pooled connection before use only when it has been idle a while.

    ``pool_pre_ping`` checks every connection on every checkout: on PostgreSQL a round trip
    of its own, as long as the one statement of a ``GET /v1/nodes/<id>``. A connection handed
    back moments ago is as alive as the ping would show, so only one idle for longer than
    ``idle_seconds`` is pinged; a dead one is replaced (``DisconnectionError`` makes the pool
    connect again) before anyone uses it. A server that goes away while a connection is in
    use fails that use, as it did with the pre-ping, and the pool then drops all its
    connections (SQLAlchemy's disconnect handling).
    """
    idle_since = "herd.idle_since"

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry) -> None:
        record.info[idle_since] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(
        dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry, _proxy: object
    ) -> None:
        since = record.info.get(idle_since)
        if since is None or time.monotonic() - since < idle_seconds:
            return  # new, or handed back moments ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise DisconnectionError(f"a pooled connection is gone: {exc}") from exc


def _sqlite_directory(directory: Path) -> None:
    """Make the SQLite file's directory if only it is missing (the data directory).

    A URL naming a directory that does not exist is a mistake to report, not a tree to
    create (``sqlite:////no/such/dir/x.db`` made ``/no/such/dir``).
    """
    if directory.is_dir():
        return
    if directory.exists():
        raise DatabaseUnavailable(f"{directory} is not a directory (--data-dir, --db-url)")
    if not directory.parent.is_dir():
        raise DatabaseUnavailable(
            f"the directory {directory.parent} does not exist: herd makes the data directory, "
            "not the directories above it (--data-dir, --db-url)"
        )
    directory.mkdir(exist_ok=True)


def _safe(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "(unparseable URL)"


class Database:
    """Owns the engines and hands out units of work.

    ``write()`` commits on success and rolls back on error; ``read()`` never
    commits. Repositories take the session as an argument and never commit.
    """

    def __init__(
        self,
        url: str,
        *,
        sqlite_synchronous: str = "NORMAL",
        member_cache_members: int = DEFAULT_MEMBER_CACHE,
    ) -> None:
        if sqlite_synchronous not in SQLITE_SYNCHRONOUS:
            raise ValueError(f"sqlite_synchronous must be one of {SQLITE_SYNCHRONOUS}")
        self.url = _normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        try:
            if self.is_sqlite:
                path = self.url.split("///", 1)[-1].split("?", 1)[0]
                if path and path != ":memory:":
                    _sqlite_directory(Path(path).parent)
                self.write_engine = _sqlite_engine(
                    self.url, immediate=True, synchronous=sqlite_synchronous
                )
                self.read_engine = _sqlite_engine(
                    self.url, immediate=False, synchronous=sqlite_synchronous
                )
            else:
                self.write_engine = create_engine(
                    self.url,
                    pool_size=20,
                    max_overflow=40,
                    json_serializer=_json_text,
                    json_deserializer=_json_value,
                )
                _ping_when_idle(self.write_engine, PING_AFTER_IDLE)
                # Reads run each statement in its own implicit transaction: under READ
                # COMMITTED every statement takes its own snapshot anyway, so the BEGIN
                # and the ROLLBACK around a read were two round trips that bought nothing
                # (an engine's scale of two nodes made nine reads: issue 28). Same pool.
                self.read_engine = self.write_engine.execution_options(isolation_level="AUTOCOMMIT")
        except (ArgumentError, NoSuchModuleError, ImportError) as exc:
            raise DatabaseUnavailable(
                f"invalid database URL (--db-url, HERD_DB_URL) {_safe(url)}: {exc}"
            ) from None
        # SQLite runs one writer at a time anyway. Queueing this process's writers on a lock
        # spares them SQLite's sleeping busy handler, whose back-off starved some callers for
        # seconds under 32 concurrent clients (other processes still meet the busy timeout).
        self._write_lock: threading.RLock | contextlib.nullcontext[None] = (
            threading.RLock() if self.is_sqlite else contextlib.nullcontext()
        )
        #: cluster members this process read, reused while their member revision holds
        self.member_cache = MemberCache(member_cache_members)
        info = {member_cache.SESSION_KEY: self.member_cache}
        self._write_sessions = sessionmaker(self.write_engine, expire_on_commit=False, info=info)
        self._read_sessions = sessionmaker(self.read_engine, expire_on_commit=False, info=info)
        self._stream_sessions = (
            self._read_sessions
            if self.is_sqlite
            else sessionmaker(self.write_engine, expire_on_commit=False, info=info)
        )
        # Every transaction that changes a cluster's size records it (before the revision
        # bump, which stays the transaction's last statement).
        size_history.track(self._write_sessions)
        # Every transaction that writes member rows bumps their cluster's member revision.
        member_revisions.track(self._write_sessions)
        member_revisions.track(self._read_sessions)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A unit of work that commits when the block ends without error."""
        with self._write_lock:
            session = self._write_sessions()
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise
            finally:
                session.close()
        # Work that must only happen once the rows are visible (waking the engine).
        for callback in session.info.pop("after_commit", []):
            callback()

    @contextmanager
    def read(self, *, streaming: bool = False) -> Iterator[Session]:
        """A unit of work that only reads, ended without a commit.

        ``streaming``: the reads stream their rows (``yield_per``), which PostgreSQL's
        server-side cursors allow only inside a transaction (on SQLite it changes nothing).
        """
        session = self._stream_sessions() if streaming else self._read_sessions()
        try:
            yield session
        finally:
            # close() ends the transaction without expiring loaded rows, so callers
            # may keep reading the detached objects it returned.
            session.close()

    @contextmanager
    def read_connection(self) -> Iterator[Connection]:
        """A Core connection for reads that need no ORM objects (the API's hot reads).

        Cheaper than a :meth:`read` session: no identity map, no ORM result processing.
        """
        with self.read_engine.connect() as connection:
            if not self.is_sqlite:
                # Each statement its own snapshot: no BEGIN and ROLLBACK round trips around
                # a single SELECT (SQLite's are in-process and cost next to nothing).
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            yield connection

    @contextmanager
    def autocommit(self) -> Iterator[Connection]:
        """PostgreSQL: a Core connection whose every statement commits on its own.

        For a write that is one statement (the mark batch, ``store/mark_statement.py``):
        psycopg sends BEGIN and COMMIT as round trips of their own, as long as the statement.
        """
        if self.is_sqlite:
            raise ValueError("autocommit() is for PostgreSQL: SQLite writes take BEGIN IMMEDIATE")
        with self.read_engine.connect() as connection:
            yield connection

    def migrate(self, revision: str = "head") -> None:
        """Bring the schema to the newest Alembic revision (or to ``revision``)."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        for attempt in range(5):
            try:
                with self.write_engine.connect() as connection:
                    config.attributes["connection"] = connection
                    command.upgrade(config, revision)
                    connection.commit()
                return
            except OperationalError as exc:
                # Several engine processes may start together on one database.
                if attempt == 4:
                    reason = str(exc.orig or exc).strip().splitlines()[0]
                    raise DatabaseUnavailable(
                        f"cannot open the database {_safe(self.url)}: {reason}"
                    ) from None
                time.sleep(0.5 * (attempt + 1))

    def ping(self) -> str | None:
        """None when the database answers a trivial query, else why it did not."""
        try:
            with self.read() as session:
                session.execute(text("SELECT 1"))
        except SQLAlchemyError as exc:
            return str(exc)
        return None

    def dispose(self) -> None:
        self.write_engine.dispose()
        if self.is_sqlite:  # PostgreSQL's read engine shares the write engine's pool
            self.read_engine.dispose()


def refresh_for_update(session: Session, row: object) -> None:
    """Re-read ``row`` locked until the transaction ends, where rows can be locked.

    On PostgreSQL this is ``SELECT ... FOR UPDATE``; SQLite has no row locks, and a
    write transaction there already keeps every other writer out.
    """
    if session.get_bind().dialect.name == "postgresql":
        session.refresh(row, with_for_update=True)
