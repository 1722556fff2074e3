"""What happened: events and the cluster size history."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Float,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base


class EventRow(Base):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_timestamp", "timestamp"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    timestamp: Mapped[float] = mapped_column(Float)
    oid: Mapped[str] = mapped_column(ID, index=True)
    oname: Mapped[str] = mapped_column(String(255), default="")
    otype: Mapped[str] = mapped_column(String(36))
    cluster_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    level: Mapped[str] = mapped_column(String(16), default="INFO")
    user: Mapped[str] = mapped_column(String(64), default="")
    project: Mapped[str] = mapped_column(String(64), index=True)
    action: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(255), default="")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    meta_data: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    #: the API request whose action (or handling) recorded it
    request_id: Mapped[str | None] = mapped_column(String(128), nullable=True)


class ClusterSizeRow(Base):
    """A cluster's member count and desired capacity after a change (store/size_history.py)."""

    __tablename__ = "cluster_sizes"
    __table_args__ = (Index("ix_cluster_sizes_cluster_at", "cluster_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cluster_id: Mapped[str] = mapped_column(ID)
    at: Mapped[float] = mapped_column(Float)
    members: Mapped[int] = mapped_column(Integer)
    desired_capacity: Mapped[int] = mapped_column(Integer)
