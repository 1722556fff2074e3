"""Alembic environment: herd passes its own connection in ``config.attributes``."""

from __future__ import annotations

from alembic import context

from herd.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - herd always passes a connection
    raise RuntimeError("herd runs migrations through herd.store.database.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
