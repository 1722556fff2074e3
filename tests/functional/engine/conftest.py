from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.functional.engine.harness import Harness, running_engine


@pytest.fixture
def harness(tmp_path: Path, db_url: str) -> Iterator[Harness]:
    """A running engine on a fresh SQLite file or PostgreSQL database (per ``db_url``)."""
    with running_engine(tmp_path / "data", db_url=db_url) as h:
        yield h
