"""The Alembic revisions build exactly the tables ``store/models/`` maps (no drift)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from herd.store.database import Database
from herd.store.models import Base


def test_migrations_match_the_models(db_url: str) -> None:
    database = Database(db_url)
    try:
        database.migrate()
        with database.write_engine.connect() as connection:
            drift = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    finally:
        database.dispose()
    assert drift == []
