"""action steps: the durable steps of an action (``ActionExecution.once``), apart from its data

An action's ``data`` is Senlin's (what its policies decided, compared field by field by the
conformance tests); the results a handler records so that a resumed run does not decide or
act twice live in their own column.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 17:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("steps", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("steps")
