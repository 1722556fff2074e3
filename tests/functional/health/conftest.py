from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.functional.engine.harness import Harness, running_engine


@pytest.fixture
def harness(tmp_path: Path, db_url: str) -> Iterator[Harness]:
    """A running engine (health manager on a fast tick) on SQLite or PostgreSQL."""
    with running_engine(
        tmp_path / "data",
        db_url=db_url,
        health_tick=0.05,
        health_backoff_base=0.5,
        health_backoff_max=4.0,
        health_backoff_reset=60.0,
    ) as h:
        yield h
