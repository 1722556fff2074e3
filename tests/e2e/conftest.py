from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.conftest import PgServer, free_port
from tests.e2e.matrix import SERVER_ENV, MatrixServer, V, holding_command
from tests.e2e.server import HerdServer
from tests.webhook_receiver import Receiver


def _kill_node_processes(data_dir: Path) -> None:
    """Clean up whatever a failing test left running (node processes carry HERD_OWNER)."""
    marker = str(data_dir.resolve()).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker in (proc / "environ").read_bytes():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(proc.name), signal.SIGKILL)


@pytest.fixture
def herd_server(tmp_path: Path) -> Iterator[HerdServer]:
    """``herd serve`` on its embedded defaults (SQLite under the data dir)."""
    server = HerdServer(tmp_path / "data", free_port())
    try:
        yield server.start()
    finally:
        server.stop()
        _kill_node_processes(tmp_path / "data")


@pytest.fixture
def herd_server_pg(tmp_path: Path, pg_server: PgServer) -> Iterator[HerdServer]:
    """``herd serve`` on a fresh database of the suite's real PostgreSQL server."""
    name = pg_server.create_database()
    server = HerdServer(tmp_path / "data", free_port(), db_url=pg_server.url_for(name))
    try:
        yield server.start()
    finally:
        server.stop()
        _kill_node_processes(tmp_path / "data")
        pg_server.drop_database(name)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def matrix_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MatrixServer]:
    """The crash and cancel matrices' server (tests/e2e/matrix.py), SQLite then PostgreSQL.

    The module says what its server holds in flight: ``HELD`` (action types),
    ``HOLD_SECONDS`` and ``HOLD_WHEN`` (``before`` or ``after`` the handler's work).
    """
    tmp = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    name = None
    if request.param == "sqlite":
        db_url = f"sqlite:///{tmp / 'data' / 'herd.db'}"
    else:
        pg: PgServer = request.getfixturevalue("pg_server")
        name = pg.create_database()
        db_url = pg.url_for(name)
    command = holding_command(
        set(request.module.HELD), request.module.HOLD_SECONDS, request.module.HOLD_WHEN
    )
    herd = HerdServer(tmp / "data", free_port(), db_url=db_url, command=command, **SERVER_ENV)
    herd.start(timeout=120)
    client = httpx.Client(base_url=herd.url, headers=V, timeout=30, trust_env=False)
    hooks = Receiver()
    try:
        yield MatrixServer(herd, db_url, client, hooks)
    finally:
        hooks.server.shutdown()
        client.close()
        herd.stop()
        if name is not None:
            request.getfixturevalue("pg_server").drop_database(name)
