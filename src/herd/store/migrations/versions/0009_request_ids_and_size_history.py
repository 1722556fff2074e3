"""request ids on actions and events; a stored size history per cluster

``actions.request_id`` and ``events.request_id`` name the API request that caused them
(child actions and their events inherit it), so an ``X-Openstack-Request-Id`` leads to
what it did. ``cluster_sizes`` keeps each cluster's member count and desired capacity
every time a transaction changed one of them: the dashboard's size chart reads it
instead of rebuilding the history from event texts.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("request_id", sa.String(length=128), nullable=True))
        batch.create_index("ix_actions_request_id", ["request_id"])
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("request_id", sa.String(length=128), nullable=True))
    op.create_table(
        "cluster_sizes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("members", sa.Integer(), nullable=False),
        sa.Column("desired_capacity", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_cluster_sizes_cluster_at", "cluster_sizes", ["cluster_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_cluster_sizes_cluster_at", table_name="cluster_sizes")
    op.drop_table("cluster_sizes")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("request_id")
    with op.batch_alter_table("actions") as batch:
        batch.drop_index("ix_actions_request_id")
        batch.drop_column("request_id")
