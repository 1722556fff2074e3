"""Credentials herd acts with on a user's behalf (Senlin's ``credential`` table).

One row per (user, project): the id of the Keystone trust from that user (the trustor) to
herd's service user (the trustee), scoped to that project. The ``os.nova.server`` driver
authenticates with herd's service user and this trust, so servers are made in the user's
project. The id never leaves the store: no view, event or log shows it.
"""

from __future__ import annotations

from sqlalchemy import Float, String
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import Base


class CredentialRow(Base):
    __tablename__ = "credentials"

    user: Mapped[str] = mapped_column(String(64), primary_key=True)
    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    trust_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
