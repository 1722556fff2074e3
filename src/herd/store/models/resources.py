"""The resources users see: profiles, clusters, nodes, policies and their bindings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.enum_text import EnumText
from herd.store.models.base import ID, Base, OwnedMixin
from herd.types import ClusterStatus, HealthStatus, NodeStatus


class ProfileRow(OwnedMixin, Base):
    __tablename__ = "profiles"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    type: Mapped[str] = mapped_column(String(255))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    meta_data: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)


class ClusterRow(OwnedMixin, Base):
    __tablename__ = "clusters"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    profile_id: Mapped[str] = mapped_column(ID, ForeignKey("profiles.id"))
    init_at: Mapped[float] = mapped_column(Float)
    min_size: Mapped[int] = mapped_column(Integer, default=0)
    max_size: Mapped[int] = mapped_column(Integer, default=-1)
    desired_capacity: Mapped[int] = mapped_column(Integer, default=0)
    next_index: Mapped[int] = mapped_column(Integer, default=1)
    timeout: Mapped[int] = mapped_column(Integer, default=3600)
    status: Mapped[ClusterStatus] = mapped_column(
        EnumText(ClusterStatus, 32), default=ClusterStatus.INIT
    )
    status_reason: Mapped[str] = mapped_column(Text, default="")
    meta_data: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    dependents: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    deleted_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class NodeRow(OwnedMixin, Base):
    __tablename__ = "nodes"
    __table_args__ = (Index("ix_nodes_cluster_index", "cluster_id", "index"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    physical_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    cluster_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    profile_id: Mapped[str] = mapped_column(ID, ForeignKey("profiles.id"))
    index: Mapped[int] = mapped_column(Integer, default=-1)
    role: Mapped[str] = mapped_column(String(64), default="")
    init_at: Mapped[float] = mapped_column(Float)
    status: Mapped[NodeStatus] = mapped_column(EnumText(NodeStatus, 32), default=NodeStatus.INIT)
    status_reason: Mapped[str] = mapped_column(Text, default="")
    health: Mapped[HealthStatus] = mapped_column(
        EnumText(HealthStatus, 32), default=HealthStatus.UNKNOWN
    )
    health_reason: Mapped[str] = mapped_column(Text, default="")
    health_marked_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    health_marked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: bumped on every health change, so clients can order concurrent marks
    health_generation: Mapped[int] = mapped_column(Integer, default=0)
    tainted: Mapped[bool] = mapped_column(Boolean, default=False)
    meta_data: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    dependents: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    deleted_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class PolicyRow(OwnedMixin, Base):
    __tablename__ = "policies"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    type: Mapped[str] = mapped_column(String(255))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class BindingRow(Base):
    """A policy attached to a cluster (Senlin's ``cluster_policy``)."""

    __tablename__ = "cluster_policies"
    __table_args__ = (UniqueConstraint("cluster_id", "policy_id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    cluster_id: Mapped[str] = mapped_column(ID, ForeignKey("clusters.id"), index=True)
    policy_id: Mapped[str] = mapped_column(ID, ForeignKey("policies.id"), index=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    priority: Mapped[int] = mapped_column(Integer)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    last_op: Mapped[float | None] = mapped_column(Float, nullable=True)
