from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.functional.engine.harness import Harness, running_engine


@pytest.fixture
def harness(tmp_path: Path, db_url: str) -> Iterator[Harness]:
    """A running engine on a fresh SQLite file or PostgreSQL database (per ``db_url``)."""
    with running_engine(tmp_path / "data", db_url=db_url) as h:
        yield h


@pytest.fixture
def no_process_left(tmp_path: Path) -> Iterator[None]:
    """Kill whatever node processes a test left under ``tmp_path/data`` (engines leave nodes
    running by design); a module that starts real processes asks for it with ``usefixtures``."""
    yield
    marker = str((tmp_path / "data").resolve()).encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (proc / "environ").read_bytes():
                    os.killpg(int(proc.name), signal.SIGKILL)
