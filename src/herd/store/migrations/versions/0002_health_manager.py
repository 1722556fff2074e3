"""health manager: cluster leases and node check records

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "health_leases",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("engine_id", sa.String(length=36), nullable=False),
        sa.Column("acquired_at", sa.Float(), nullable=False),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id"),
    )
    with op.batch_alter_table("health_leases", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_health_leases_engine_id"), ["engine_id"], unique=False)

    op.create_table(
        "node_checks",
        sa.Column("node_id", sa.String(length=36), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=True),
        sa.Column("checked_at", sa.Float(), nullable=True),
        sa.Column("mode", sa.String(length=32), nullable=False),
        sa.Column("healthy", sa.Boolean(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("failed_since", sa.Float(), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("streak", sa.Integer(), nullable=False),
        sa.Column("recoveries", sa.Integer(), nullable=False),
        sa.Column("last_recovery_at", sa.Float(), nullable=True),
        sa.Column("last_recovery_result", sa.Text(), nullable=False),
        sa.Column("backoff_until", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("node_id"),
    )
    with op.batch_alter_table("node_checks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_node_checks_cluster_id"), ["cluster_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("node_checks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_node_checks_cluster_id"))
    op.drop_table("node_checks")
    with op.batch_alter_table("health_leases", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_health_leases_engine_id"))
    op.drop_table("health_leases")
