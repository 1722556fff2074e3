"""member changes packed: one row per revision and way of change, the node ids in one text

``member_changes`` held a row per changed node. A process patching its copy of a
100,000-member cluster after another changed 1% of it read 1,000 rows and grouped them
(0.55 ms of SQLite's time, most of the patch); now each revision logs a row per way its
nodes changed (the whole row, or the state to given values), with the ids space-separated.

The log only spares readers a full read, so it is dropped rather than converted: every
cluster's horizon moves up to its revision, and a process holding members older than that
reads them all once.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("member_changes")
    op.create_table(
        "member_changes",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("fields", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=36), nullable=True),
        sa.Column("health", sa.String(length=36), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("node_ids", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "revision", "part"),
    )
    op.execute("UPDATE member_revisions SET horizon = revision")


def downgrade() -> None:
    op.drop_table("member_changes")
    op.create_table(
        "member_changes",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("node_id", sa.String(length=36), nullable=False),
        sa.Column("fields", sa.String(length=8), nullable=False, server_default="row"),
        sa.Column("status", sa.String(length=36), nullable=True),
        sa.Column("health", sa.String(length=36), nullable=True),
        sa.PrimaryKeyConstraint("cluster_id", "revision", "node_id"),
    )
    op.execute("UPDATE member_revisions SET horizon = revision")
