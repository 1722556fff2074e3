"""receivers keep only a digest of their webhook secret

The secret becomes an HMAC of the receiver's id and a salt under the webhook key,
and the table keeps the salt and the secret's SHA-256 instead of the secret and
the URLs built from it. A receiver made before this keeps working: its digest is
computed from the stored secret, and with no salt herd shows no URLs for it until
its secret is rotated (``openstack cluster receiver update`` with
``rotate_secret``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 18:00:00
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_WEBHOOKS = "/v1/webhooks/"


def _base_of(channel: object) -> str:
    if isinstance(channel, str):
        channel = json.loads(channel or "{}")
    url = str(channel.get("alarm_url", "")) if isinstance(channel, Mapping) else ""
    return url.split(_WEBHOOKS, 1)[0] if _WEBHOOKS in url else ""


def upgrade() -> None:
    with op.batch_alter_table("receivers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("webhook_base", sa.String(length=1024), nullable=True))
        batch_op.add_column(sa.Column("secret_salt", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("secret_hash", sa.String(length=64), nullable=True))
    bind = op.get_bind()
    receivers = sa.table(
        "receivers",
        sa.column("id", sa.String),
        sa.column("channel", sa.JSON),
        sa.column("secret", sa.String),
        sa.column("webhook_base", sa.String),
        sa.column("secret_hash", sa.String),
    )
    rows = bind.execute(sa.select(receivers.c.id, receivers.c.channel, receivers.c.secret))
    for receiver_id, channel, secret in rows.all():
        bind.execute(
            receivers.update()
            .where(receivers.c.id == receiver_id)
            .values(
                webhook_base=_base_of(channel),
                secret_hash=hashlib.sha256(str(secret).encode("utf-8")).hexdigest(),
            )
        )
    with op.batch_alter_table("receivers", schema=None) as batch_op:
        batch_op.alter_column("webhook_base", existing_type=sa.String(length=1024), nullable=False)
        batch_op.alter_column("secret_hash", existing_type=sa.String(length=64), nullable=False)
        batch_op.drop_column("channel")
        batch_op.drop_column("secret")


def downgrade() -> None:
    # The secrets cannot be recovered from their digests: receivers come back with no
    # working URL (an empty secret matches nothing) until they are rotated.
    with op.batch_alter_table("receivers", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("channel", sa.JSON(), nullable=False, server_default=sa.text("'{}'"))
        )
        batch_op.add_column(
            sa.Column("secret", sa.String(length=64), nullable=False, server_default="")
        )
        batch_op.drop_column("secret_hash")
        batch_op.drop_column("secret_salt")
        batch_op.drop_column("webhook_base")
