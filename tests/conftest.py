"""Shared fixtures: settings, a database URL on SQLite and on a real PostgreSQL, API clients.

PostgreSQL: ``HERD_TEST_PG_URL`` (a server URL whose user may CREATE DATABASE)
is used when set; otherwise each pytest(-xdist) worker starts a throwaway
server with ``initdb``/``pg_ctl`` in a temporary directory, on a free port and a
unix socket inside that directory, and stops it at the end of the session.
``initdb`` refuses to run as root, so as root the server runs as ``nobody``.
Each test that asks for ``db_url`` gets a fresh database.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.webhook_receiver import Receiver

from herd.config import Settings

with warnings.catch_warnings():
    # Starlette >= 1.x deprecates httpx in its TestClient (it wants httpx2); the
    # warning fires once at import, and pytest turns warnings into errors.
    warnings.simplefilter("ignore", UserWarning)
    from fastapi.testclient import TestClient

PG_BIN_DIRS = ["/usr/local/bin", *sorted(str(p) for p in Path("/usr/lib/postgresql").glob("*/bin"))]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in PG_BIN_DIRS:
        candidate = Path(directory) / name
        if candidate.exists():
            return str(candidate)
    return None


@dataclass
class PgServer:
    """A PostgreSQL server the tests may create databases on."""

    admin_url: str  # SQLAlchemy URL of the maintenance database
    url_for: Callable[[str], str]
    template: str | None = None

    def _template(self) -> str:
        """A migrated database that new test databases are copied from (much faster)."""
        if self.template is None:
            from herd.store.database import Database

            name = self._create(None)
            database = Database(self.url_for(name))
            try:
                database.migrate()
            finally:
                database.dispose()
            self.template = name
        return self.template

    def _create(self, template: str | None) -> str:
        import psycopg

        name = f"herd_{uuid.uuid4().hex[:16]}"
        clause = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(_psycopg_url(self.admin_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{clause}')
        return name

    def create_database(self, *, migrated: bool = True) -> str:
        """A new database, already at the newest schema unless ``migrated`` is False."""
        return self._create(self._template() if migrated else None)

    def drop_database(self, name: str) -> None:
        import psycopg

        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(_psycopg_url(self.admin_url), autocommit=True) as conn,
        ):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _psycopg_url(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _with_database(url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _start_local_pg() -> tuple[PgServer, Callable[[], None]]:
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found and HERD_TEST_PG_URL unset")
    base = Path(tempfile.mkdtemp(prefix="herd-pg-"))
    data, sock = base / "data", base / "s"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        # initdb refuses to run as root: run the server as an unprivileged user.
        for path in (base, sock):
            shutil.chown(path, "nobody")
        prefix = ["runuser", "-u", "nobody", "--"]
    port = free_port()
    subprocess.run(
        [
            *prefix,
            initdb,
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    options = (
        f"-p {port} -k {sock} -c listen_addresses='' -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
        check=True,
        stdout=subprocess.DEVNULL,
    )

    def url_for(name: str) -> str:
        return f"postgresql+psycopg://postgres@/{name}?host={sock}&port={port}"

    def stop() -> None:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(base, ignore_errors=True)

    return PgServer(url_for("postgres"), url_for), stop


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for this worker (HERD_TEST_PG_URL or a throwaway one)."""
    given = os.environ.get("HERD_TEST_PG_URL")
    if given:
        from herd.store.database import _normalise_url

        admin = _normalise_url(given)
        yield PgServer(admin, lambda name: _with_database(admin, name))
        return
    server, stop = _start_local_pg()
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
