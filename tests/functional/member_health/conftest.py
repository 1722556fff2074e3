"""Fixtures for the mark-unhealthy tests: the app with its engine (sim), on SQLite and PostgreSQL.

The marks race the engine's locks and writes, so they run on both stores (``db_url``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api

from herd.config import Settings


def engine_settings(tmp_path: Path, db_url: str, **extra: object) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        run_engine=True,
        auth="none",
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
def api(api_client: ApiClientFactory, tmp_path: Path, db_url: str) -> Iterator[Api]:
    yield Api(api_client(engine_settings(tmp_path, db_url), start_engine=True))
