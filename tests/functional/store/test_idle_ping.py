"""PostgreSQL's pool pings a connection before use only after it sat idle (store/database.py).

A connection the server dropped while it sat in the pool is replaced before anyone uses it,
as ``pool_pre_ping`` did; one handed back moments ago is used without the extra round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool
from tests.conftest import PgServer

from herd.store import database
from herd.store.database import Database

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(pg_server: PgServer) -> Iterator[str]:
    name = pg_server.create_database(migrated=False)
    try:
        yield pg_server.url_for(name)
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def make_database(url: str) -> Iterator[Callable[[], Database]]:
    made: list[Database] = []

    def make() -> Database:
        made.append(Database(url))
        return made[-1]

    yield make
    for db in made:
        db.dispose()


def _backend(db: Database) -> int:
    with db.read_connection() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _kill(db: Database, pid: int) -> None:
    # From outside the pool, so that the killed connection is the pool's only one.
    outside = create_engine(db.url, poolclass=NullPool)
    with outside.connect() as other:
        other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    outside.dispose()


def test_a_connection_dropped_while_idle_is_replaced_before_use(
    make_database: Callable[[], Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "PING_AFTER_IDLE", 0.0)  # every pooled connection is "idle"
    db = make_database()
    dead = _backend(db)
    _kill(db, dead)
    # The pool's only connection is dead: the ping finds out and the pool connects again.
    assert _backend(db) != dead


def test_a_connection_back_moments_ago_is_not_pinged(
    make_database: Callable[[], Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "PING_AFTER_IDLE", 3600.0)
    db = make_database()
    pings: list[object] = []
    original = db.write_engine.dialect.do_ping

    def counted(connection: Any) -> bool:
        pings.append(connection)
        return original(connection)

    monkeypatch.setattr(db.write_engine.dialect, "do_ping", counted)
    first = _backend(db)
    assert _backend(db) == first and pings == []
    # Such a connection, dropped meanwhile, fails its next use (as with pool_pre_ping when the
    # server goes away mid-use), and the pool connects again for the use after it.
    _kill(db, first)
    with pytest.raises(Exception, match=r"terminat|closed|connection"):
        _backend(db)
    assert _backend(db) != first
