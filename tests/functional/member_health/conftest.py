"""Fixtures for the mark-unhealthy tests: the app with its engine (sim) on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api

from herd.config import Settings


def sqlite_settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        db_url=f"sqlite:///{tmp_path / 'herd.db'}",
        run_engine=True,
        auth="none",
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
def api(api_client: ApiClientFactory, tmp_path: Path) -> Iterator[Api]:
    yield Api(api_client(sqlite_settings(tmp_path), start_engine=True))
