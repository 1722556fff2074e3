"""receivers and the Alertmanager alerts they acted on

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "receivers",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=True),
        sa.Column("actor", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("channel", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("project", sa.String(length=64), nullable=False),
        sa.Column("domain", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("receivers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_receivers_cluster_id"), ["cluster_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_receivers_name"), ["name"], unique=False)
        batch_op.create_index(batch_op.f("ix_receivers_project"), ["project"], unique=False)

    op.create_table(
        "receiver_alerts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("receiver_id", sa.String(length=36), nullable=False),
        sa.Column("alert_key", sa.String(length=64), nullable=False),
        sa.Column("action_id", sa.String(length=36), nullable=True),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("receiver_id", "alert_key", name="uq_receiver_alert"),
    )
    with op.batch_alter_table("receiver_alerts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_receiver_alerts_receiver_id"), ["receiver_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("receiver_alerts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_receiver_alerts_receiver_id"))
    op.drop_table("receiver_alerts")
    with op.batch_alter_table("receivers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_receivers_project"))
        batch_op.drop_index(batch_op.f("ix_receivers_name"))
        batch_op.drop_index(batch_op.f("ix_receivers_cluster_id"))
    op.drop_table("receivers")
