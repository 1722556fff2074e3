"""The health manager's record of each node (issue 9)."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Connection,
    Float,
    Integer,
    String,
    Text,
    delete,
    event,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.models.base import ID, Base
from herd.store.models.resources import NodeRow


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


def _drop_checks_with_node(_mapper: object, connection: Connection, target: NodeRow) -> None:
    # A node's check record goes with the node, like its tombstone.
    connection.execute(delete(NodeCheckRow).where(NodeCheckRow.node_id == target.id))


event.listen(NodeRow, "after_delete", _drop_checks_with_node)
