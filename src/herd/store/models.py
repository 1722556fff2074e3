"""SQLAlchemy 2.0 table mappings.

Times are stored as epoch seconds (floats): they compare and sort the same on
SQLite and PostgreSQL, and the API formats them. JSON columns hold the free-form
maps Senlin exposes (metadata, data, spec, inputs, outputs).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    delete,
    event,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from herd.store.enum_text import EnumText
from herd.types import (
    ActionCause,
    ActionName,
    ActionStatus,
    ClusterStatus,
    HealthStatus,
    NodeStatus,
    ResourceType,
    TombstoneStatus,
)

ID = String(36)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class OwnedMixin:
    """Columns every user-visible resource has (Senlin's ownership triple)."""

    user: Mapped[str] = mapped_column(String(64), default="")
    project: Mapped[str] = mapped_column(String(64), index=True)
    domain: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_at: Mapped[float | None] = mapped_column(Float, nullable=True)


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


class MemberRevisionRow(Base):
    """How many times a cluster's members have changed (see store/member_revisions.py).

    Bumped as the last statement of every transaction that writes the cluster's
    node rows, so a revision names a commit-ordered state of the members.
    """

    __tablename__ = "member_revisions"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, default=0)
    #: changes up to this revision are no longer in member_changes
    horizon: Mapped[int] = mapped_column(BigInteger, default=0)


class MemberChangeRow(Base):
    """A node whose row changed in a revision of its cluster (kept for recent revisions)."""

    __tablename__ = "member_changes"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    node_id: Mapped[str] = mapped_column(ID, primary_key=True)
    #: ``row``: any member column may have changed; ``state``: only the status or health,
    #: to the values below (None: that one was not written)
    fields: Mapped[str] = mapped_column(String(8), default="row", server_default="row")
    status: Mapped[str | None] = mapped_column(String(36), nullable=True)
    health: Mapped[str | None] = mapped_column(String(36), nullable=True)


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


class ActionRow(OwnedMixin, Base):
    __tablename__ = "actions"
    __table_args__ = (Index("ix_actions_status_created", "status", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    cluster_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    target: Mapped[str] = mapped_column(ID, index=True)
    action: Mapped[ActionName] = mapped_column(EnumText(ActionName, 64))
    cause: Mapped[ActionCause] = mapped_column(EnumText(ActionCause, 255))
    owner: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    parent_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    interval: Mapped[int] = mapped_column(Integer, default=-1)
    start_time: Mapped[float | None] = mapped_column(Float, nullable=True)
    end_time: Mapped[float | None] = mapped_column(Float, nullable=True)
    timeout: Mapped[int] = mapped_column(Integer, default=3600)
    status: Mapped[ActionStatus] = mapped_column(
        EnumText(ActionStatus, 64), default=ActionStatus.INIT
    )
    status_reason: Mapped[str] = mapped_column(Text, default="")
    control: Mapped[str | None] = mapped_column(String(32), nullable=True)
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    outputs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    #: results of the action's durable steps (``ActionExecution.once``), kept apart from
    #: ``data`` (Senlin's, what the policies decided)
    steps: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    retries: Mapped[int] = mapped_column(Integer, default=0)
    #: waiting for a lifecycle hook: when the message was sent and when the wait ends
    hook_deadline: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the API request that caused it (children inherit their parent's), for tracing
    request_id: Mapped[str | None] = mapped_column(String(128), nullable=True, index=True)


class DependencyRow(Base):
    """``dependent`` may run only after ``depended`` has ended."""

    __tablename__ = "action_dependencies"
    __table_args__ = (UniqueConstraint("depended", "dependent"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    depended: Mapped[str] = mapped_column(ID, index=True)
    dependent: Mapped[str] = mapped_column(ID, index=True)


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


class ClusterLockRow(Base):
    """Exclusive (semaphore -1) or shared (semaphore = holders) lock on a cluster."""

    __tablename__ = "cluster_locks"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    action_ids: Mapped[list[Any]] = mapped_column(JSON, default=list)
    semaphore: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[float] = mapped_column(Float)


class NodeLockRow(Base):
    __tablename__ = "node_locks"

    node_id: Mapped[str] = mapped_column(ID, primary_key=True)
    action_id: Mapped[str] = mapped_column(ID)
    updated_at: Mapped[float] = mapped_column(Float)


class EngineRow(Base):
    """A running engine; its heartbeat says whether its locks may be taken over."""

    __tablename__ = "engines"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[float] = mapped_column(Float)
    heartbeat_at: Mapped[float] = mapped_column(Float, index=True)


class TokenRow(Base):
    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    project: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class TombstoneRow(Base):
    """A resource being deleted (Tricircle's ``deleting_resources``)."""

    __tablename__ = "deleting_resources"
    __table_args__ = (UniqueConstraint("resource_type", "resource_id", name="uq_deleting"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_type: Mapped[ResourceType] = mapped_column(EnumText(ResourceType, 32))
    resource_id: Mapped[str] = mapped_column(ID)
    project: Mapped[str] = mapped_column(String(64), default="")
    deleted_at: Mapped[float] = mapped_column(Float)
    requested_by: Mapped[str] = mapped_column(String(64), default="")
    action_id: Mapped[str | None] = mapped_column(ID, nullable=True)
    status: Mapped[TombstoneStatus] = mapped_column(
        EnumText(TombstoneStatus, 16), default=TombstoneStatus.DELETING
    )
    reason: Mapped[str] = mapped_column(Text, default="")


class HookDeliveryRow(Base):
    """One lifecycle-hook message sent (or tried) for a victim node."""

    __tablename__ = "hook_deliveries"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    action_id: Mapped[str] = mapped_column(ID, index=True)
    cluster_id: Mapped[str] = mapped_column(ID)
    node_id: Mapped[str] = mapped_column(ID)
    hook_type: Mapped[str] = mapped_column(String(16))
    destination: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="PENDING")
    last_error: Mapped[str] = mapped_column(Text, default="")
    sent_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)


def _drop_tombstone_with(model: type[Base], resource_type: ResourceType) -> None:
    """Whoever deletes a resource row takes its tombstone in the same transaction.

    Rows are removed from several places (node child actions, cluster deletion,
    synchronous profile and policy deletes); hooking the mapper keeps "the
    tombstone goes with the row" true for all of them, including code that does
    not know tombstones exist.
    """

    def after_delete(_mapper: Any, connection: Connection, target: Any) -> None:
        connection.execute(
            delete(TombstoneRow).where(
                TombstoneRow.resource_type == resource_type,
                TombstoneRow.resource_id == target.id,
            )
        )

    event.listen(model, "after_delete", after_delete)


for _model, _kind in (
    (ClusterRow, ResourceType.CLUSTER),
    (NodeRow, ResourceType.NODE),
    (ProfileRow, ResourceType.PROFILE),
    (PolicyRow, ResourceType.POLICY),
):
    _drop_tombstone_with(_model, _kind)


# -- health manager (issue 9) -------------------------------------------------------------


class HealthLeaseRow(Base):
    """Which engine checks a cluster's members: one row per cluster, renewed by its holder."""

    __tablename__ = "health_leases"

    cluster_id: Mapped[str] = mapped_column(ID, primary_key=True)
    engine_id: Mapped[str] = mapped_column(ID, index=True)
    acquired_at: Mapped[float] = mapped_column(Float)
    renewed_at: Mapped[float] = mapped_column(Float)


class NodeCheckRow(Base):
    """The health manager's last word on a node, and its recovery back-off state."""

    __tablename__ = "node_checks"

    node_id: Mapped[str] = mapped_column(ID, primary_key=True)
    cluster_id: Mapped[str | None] = mapped_column(ID, nullable=True, index=True)
    checked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the detection mode that decided (NODE_STATUS_POLLING, NODE_STATUS_POLL_URL, ...)
    mode: Mapped[str] = mapped_column(String(32), default="")
    healthy: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    #: when the current failure was first seen (None while healthy)
    failed_since: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: failed verdicts in a row
    failures: Mapped[int] = mapped_column(Integer, default=0)
    #: recoveries the manager started in a row (the back-off exponent)
    streak: Mapped[int] = mapped_column(Integer, default=0)
    #: recoveries the manager started in all
    recoveries: Mapped[int] = mapped_column(Integer, default=0)
    last_recovery_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    last_recovery_result: Mapped[str] = mapped_column(Text, default="")
    #: no recovery before this time (exponential back-off)
    backoff_until: Mapped[float | None] = mapped_column(Float, nullable=True)


def _drop_checks_with_node(_mapper: Any, connection: Connection, target: Any) -> None:
    # A node's check record goes with the node, like its tombstone.
    connection.execute(delete(NodeCheckRow).where(NodeCheckRow.node_id == target.id))


event.listen(NodeRow, "after_delete", _drop_checks_with_node)


# -- API processes (GET /v1/services) --------------------------------------------------------


class ApiServiceRow(Base):
    """A running ``herd serve`` API process; engines are listed from ``engines``."""

    __tablename__ = "api_services"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[float] = mapped_column(Float)
    heartbeat_at: Mapped[float] = mapped_column(Float, index=True)


# -- receivers (webhooks and Alertmanager notifications) ------------------------------------


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
