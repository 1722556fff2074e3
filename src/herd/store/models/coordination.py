"""Who runs and who holds what: engine and API heartbeats, cluster and node locks, health leases."""

from __future__ import annotations

from sqlalchemy import JSON, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base


class HeartbeatColumns:
    """The columns of a running process that reports a heartbeat (a mixin: each table its own)."""

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[float] = mapped_column(Float)
    heartbeat_at: Mapped[float] = mapped_column(Float, index=True)


class EngineRow(HeartbeatColumns, Base):
    """A running engine; its heartbeat says whether its locks may be taken over."""

    __tablename__ = "engines"


class ApiServiceRow(HeartbeatColumns, Base):
    """A running ``herd serve`` API process; engines are listed from ``engines``."""

    __tablename__ = "api_services"


class ClusterLockRow(Base):
    """Exclusive (semaphore -1) or shared (semaphore = holders) lock on a cluster."""

    __tablename__ = "cluster_locks"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    action_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    semaphore: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[float] = mapped_column(Float)


class NodeLockRow(Base):
    __tablename__ = "node_locks"

    node_id: Mapped[str] = mapped_column(ID, primary_key=True)
    action_id: Mapped[str] = mapped_column(ID)
    updated_at: Mapped[float] = mapped_column(Float)


class HealthLeaseRow(Base):
    """Which engine checks a cluster's members: one row per cluster, renewed by its holder."""

    __tablename__ = "health_leases"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    engine_id: Mapped[str] = mapped_column(ID, index=True)
    acquired_at: Mapped[float] = mapped_column(Float)
    renewed_at: Mapped[float] = mapped_column(Float)
