"""credentials: the Keystone trust herd acts through, per user and project

Senlin's ``credential`` table: for each (user, project) the id of the trust from that
user to herd's service user, with which the ``os.nova.server`` driver makes the user's
servers in the user's project (``nova_trusts``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 23:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "credentials",
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("project", sa.String(length=64), nullable=False),
        sa.Column("trust_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("user", "project"),
    )


def downgrade() -> None:
    op.drop_table("credentials")
