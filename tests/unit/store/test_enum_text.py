"""Enum-typed columns: members in, members out, anything else refused before the database."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, create_engine, insert, select
from sqlalchemy.exc import StatementError

from herd.store.enum_text import EnumText, equal_to_any
from herd.types import NodeStatus

METADATA = MetaData()
ROWS = Table(
    "rows",
    METADATA,
    Column("id", Integer, primary_key=True),
    Column("status", EnumText(NodeStatus, 32)),
)


@pytest.fixture()
def engine() -> Engine:
    engine = create_engine("sqlite://")
    METADATA.create_all(engine)
    return engine


def test_members_and_their_strings_are_stored_as_the_wire_value(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(insert(ROWS), [{"status": NodeStatus.ACTIVE}, {"status": "ERROR"}])
        raw = connection.exec_driver_sql("SELECT status FROM rows ORDER BY id").all()
        read = connection.execute(select(ROWS.c.status).order_by(ROWS.c.id)).scalars().all()
    assert [r[0] for r in raw] == ["ACTIVE", "ERROR"]
    assert read == [NodeStatus.ACTIVE, NodeStatus.ERROR]
    assert all(type(value) is NodeStatus for value in read)


def test_a_value_that_is_no_member_is_refused_and_nothing_is_written(engine: Engine) -> None:
    refused = pytest.raises(StatementError, match="'SLEEPING' is not a valid NodeStatus")
    with refused, engine.begin() as connection:
        connection.execute(insert(ROWS), [{"status": "SLEEPING"}])
    with engine.connect() as connection:
        assert connection.execute(select(ROWS.c.id)).all() == []


def test_a_filter_on_values_that_are_no_members_matches_nothing(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(insert(ROWS), [{"status": "ACTIVE"}, {"status": "ERROR"}])

        def ids(*values: str) -> list[int]:
            query = select(ROWS.c.id).where(equal_to_any(ROWS.c.status, values))
            return list(connection.execute(query.order_by(ROWS.c.id)).scalars())

        assert ids("SLEEPING") == []
        assert ids("SLEEPING", "ERROR") == [2]
        assert ids("ACTIVE", "ERROR") == [1, 2]
