from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import PgServer, free_port
from tests.e2e.server import HerdServer


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
