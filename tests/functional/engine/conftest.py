from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.functional.engine.harness import Harness, running_engine


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with running_engine(tmp_path / "data") as h:
        yield h
