"""agent tokens carry the regions they may read

``tokens.regions`` is a JSON list of region names (``placement.region_name``) an agent
token may read nodes and clusters of; NULL means every region (tokens of other roles, and
agent tokens created with ``--all-regions`` or before this revision, which keep the view
they had).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 21:35:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("regions", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("regions")
