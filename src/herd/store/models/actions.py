"""Actions, the order between them, and the lifecycle-hook messages they send."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.enum_text import EnumText
from herd.store.models.base import ID, Base, OwnedMixin
from herd.types import ActionCause, ActionControl, ActionName, ActionStatus


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
    #: a stop request to its runner (VARCHAR(32) as before: the values are the same text)
    control: Mapped[ActionControl | None] = mapped_column(
        EnumText(ActionControl, 32), nullable=True
    )
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
