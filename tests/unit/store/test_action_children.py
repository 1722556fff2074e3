"""``has_children``: whether an action stored a plan, as one EXISTS query that reads no child."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from herd.store import actions as action_store
from herd.store.database import Database
from herd.types import ActionName, ActionStatus


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    found = Database(f"sqlite:///{tmp_path / 'herd.db'}")
    found.migrate()
    try:
        yield found
    finally:
        found.dispose()


def _add(database: Database, parent_id: str | None = None, status: str = "RUNNING") -> str:
    with database.write() as session:
        row = action_store.new_action(
            action=ActionName.NODE_DELETE if parent_id else ActionName.CLUSTER_SCALE_IN,
            target="t",
            cluster_id="c",
            project="p",
            parent_id=parent_id,
            status=ActionStatus(status),
            now=time.time(),
        )
        action_store.add(session, row)
    return row.id


def test_has_children_is_one_exists_query(database: Database) -> None:
    parent, other = _add(database), _add(database)
    for _ in range(3):
        _add(database, parent)
    statements: list[str] = []

    def seen(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(database.read_engine, "before_cursor_execute", seen)
    try:
        with database.read() as session:
            assert action_store.has_children(session, parent)
            assert not action_store.has_children(session, other)
    finally:
        event.remove(database.read_engine, "before_cursor_execute", seen)
    queries = [s for s in statements if "actions" in s]
    assert len(queries) == 2 and all("EXISTS" in s for s in queries)


def test_unfinished_children_of_one_parent(database: Database) -> None:
    parent, other = _add(database), _add(database)
    running = _add(database, parent)
    _add(database, parent, "SUCCEEDED")
    _add(database, other)
    with database.read() as session:
        assert [c.id for c in action_store.unfinished_children(session, parent)] == [running]
        assert len(action_store.unfinished_children(session)) == 2
