"""api_services: heartbeats of API processes, for GET /v1/services

Revision ID: 0004
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_services",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("heartbeat_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("api_services", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_api_services_heartbeat_at"), ["heartbeat_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("api_services", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_services_heartbeat_at"))
    op.drop_table("api_services")
