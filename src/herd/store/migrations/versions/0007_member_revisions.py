"""member revisions: a commit-ordered version of each cluster's members

``member_revisions`` holds one counter per cluster that every transaction writing
the cluster's node rows bumps last; ``member_changes`` names the nodes each
recent revision touched. Together they let a process keep a cluster's members in
memory between decisions and re-read only what changed.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "member_revisions",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("horizon", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id"),
    )
    op.create_table(
        "member_changes",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("node_id", sa.String(length=36), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "revision", "node_id"),
    )


def downgrade() -> None:
    op.drop_table("member_changes")
    op.drop_table("member_revisions")
