"""Tombstones: resources being deleted, dropped with the row they stand for."""

from __future__ import annotations

from sqlalchemy import (
    Connection,
    Float,
    Integer,
    String,
    Text,
    UniqueConstraint,
    delete,
    event,
)
from sqlalchemy.orm import Mapped, mapped_column

from herd.store.enum_text import EnumText
from herd.store.models.base import ID, Base
from herd.store.models.resources import ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.types import ResourceType, TombstoneStatus


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


def _drop_tombstone_with(model: type[Base], resource_type: ResourceType) -> None:
    """Whoever deletes a resource row takes its tombstone in the same transaction.

    Rows are removed from several places (node child actions, cluster deletion,
    synchronous profile and policy deletes); hooking the mapper keeps "the
    tombstone goes with the row" true for all of them, including code that does
    not know tombstones exist.
    """

    def after_delete(
        _mapper: object,
        connection: Connection,
        target: ClusterRow | NodeRow | ProfileRow | PolicyRow,
    ) -> None:
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
