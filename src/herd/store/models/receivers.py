"""Receivers (webhooks and Alertmanager notifications) and the alerts they acted on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Float,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base, OwnedMixin


class ReceiverRow(OwnedMixin, Base):
    """A receiver (Senlin's ``receiver``): an outside signal that starts an action on a cluster.

    Its URLs carry a secret derived from the webhook key, the id and ``secret_salt``;
    only the secret's SHA-256 (``secret_hash``) is stored (store/receivers.py).
    ``webhook_base`` is where its URLs point.
    """

    __tablename__ = "receivers"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    type: Mapped[str] = mapped_column(String(32))
    cluster_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    action: Mapped[str | None] = mapped_column(String(64), nullable=True)
    actor: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    webhook_base: Mapped[str] = mapped_column(String(1024), default="")
    #: None for a receiver whose secret herd cannot derive (made before derived secrets)
    secret_salt: Mapped[str | None] = mapped_column(String(32), nullable=True)
    secret_hash: Mapped[str] = mapped_column(String(64))


class ReceiverAlertRow(Base):
    """A firing Alertmanager alert a receiver has acted on (deduplicates repeated deliveries)."""

    __tablename__ = "receiver_alerts"
    __table_args__ = (UniqueConstraint("receiver_id", "alert_key", name="uq_receiver_alert"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    receiver_id: Mapped[str] = mapped_column(ID, index=True)
    #: SHA-256 of the group key, the alert's fingerprint (or labels) and its startsAt
    alert_key: Mapped[str] = mapped_column(String(64))
    action_id: Mapped[str | None] = mapped_column(ID, nullable=True)
    received_at: Mapped[float] = mapped_column(Float)
