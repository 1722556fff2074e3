"""``sqlite_synchronous`` reaches SQLite as ``PRAGMA synchronous`` on every connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from herd.store.database import Database

LEVELS = {1: "NORMAL", 2: "FULL"}


@pytest.mark.parametrize("level", ["NORMAL", "FULL"])
def test_the_setting_is_the_pragma_of_reads_and_writes(tmp_path: Path, level: str) -> None:
    database = Database(f"sqlite:///{tmp_path / 'herd.db'}", sqlite_synchronous=level)
    try:
        with database.read() as session:
            assert LEVELS[session.execute(text("PRAGMA synchronous")).scalar_one()] == level
            assert session.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
        with database.write() as session:
            assert LEVELS[session.execute(text("PRAGMA synchronous")).scalar_one()] == level
    finally:
        database.dispose()


def test_anything_else_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sqlite_synchronous"):
        Database(f"sqlite:///{tmp_path / 'herd.db'}", sqlite_synchronous="OFF")
