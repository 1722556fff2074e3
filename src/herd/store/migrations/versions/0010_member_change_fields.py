"""member changes say what they changed: the whole row, or only its state, with its values

``member_changes.fields`` is ``row`` (any member column may have changed: a reader reads
the whole member again) or ``state`` (only the status or the health changed, as a status
change or a health mark does, and ``status`` / ``health`` hold the new values, NULL for
the one not written). A process that holds a cluster's members patches them after 1% of
them changed by reading the log alone, instead of every column of those rows with their
JSON extractions and joins.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 20:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("member_changes") as batch:
        batch.add_column(
            sa.Column("fields", sa.String(length=8), nullable=False, server_default="row")
        )
        batch.add_column(sa.Column("status", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("health", sa.String(length=36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("member_changes") as batch:
        batch.drop_column("health")
        batch.drop_column("status")
        batch.drop_column("fields")
