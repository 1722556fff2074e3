"""Tombstones: the ``deleting_resources`` rows that mark a resource as being deleted.

A tombstone is inserted with a plain INSERT guarded by the ``uq_deleting``
unique constraint (never check-then-insert), inside a savepoint so that losing
the race does not spoil the caller's transaction. It is removed in the same
transaction as its resource row (see the mapper hook in ``models/tombstones.py``). A
failed deletion keeps it with status ERROR, so the resource stays invisible to
regional agents until a retry or an administrator's purge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from sqlalchemy import ColumnElement, and_, delete, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import QueryableAttribute, Session

from herd.errors import ResourceInUse
from herd.store.models import NodeRow, TombstoneRow
from herd.store.resources import ROW_TYPES, ResourceRow
from herd.types import ResourceType, TombstoneStatus

T = TypeVar("T")


def insert(
    session: Session,
    *,
    resource_type: ResourceType,
    resource_id: str,
    project: str,
    requested_by: str,
    action_id: str | None,
    now: float,
) -> bool:
    """Insert a tombstone; return False when one already exists (someone else is deleting).

    The insert runs in a savepoint: on PostgreSQL a concurrent inserter waits for
    the first transaction and then fails on the unique constraint; on SQLite
    write transactions are serialised, so the loser simply finds the row.
    """
    try:
        with session.begin_nested():
            session.add(
                TombstoneRow(
                    resource_type=resource_type,
                    resource_id=resource_id,
                    project=project,
                    deleted_at=now,
                    requested_by=requested_by,
                    action_id=action_id,
                    status=TombstoneStatus.DELETING,
                    reason="",
                )
            )
    except IntegrityError:
        return False
    return True


def get(session: Session, resource_type: ResourceType, resource_id: str) -> TombstoneRow | None:
    """The tombstone of one resource, if it has one."""
    return session.scalar(
        select(TombstoneRow).where(
            TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == resource_id
        )
    )


def tombstoned(session: Session, resource_type: ResourceType, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` have a tombstone."""
    wanted = [i for i in ids if i]
    if not wanted:
        return set()
    rows = session.scalars(
        select(TombstoneRow.resource_id).where(
            TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id.in_(wanted)
        )
    ).all()
    return set(rows)


def restart(
    session: Session, resource_type: ResourceType, resource_id: str, action_id: str
) -> bool:
    """Hand a failed deletion to a new action; False when another request already did.

    A compare-and-set on the previous action id, so two retries racing for the
    same failed deletion start exactly one new action.
    """
    current = get(session, resource_type, resource_id)
    if current is None:
        return False
    result = session.execute(
        update(TombstoneRow)
        .where(
            TombstoneRow.id == current.id,
            TombstoneRow.status == current.status,
            TombstoneRow.action_id == current.action_id
            if current.action_id is not None
            else TombstoneRow.action_id.is_(None),
        )
        .values(status=TombstoneStatus.DELETING, reason="", action_id=action_id)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def set_action(
    session: Session, resource_type: ResourceType, resource_id: str, action_id: str
) -> None:
    """Record which action carries the deletion (the API stores both in one transaction)."""
    session.execute(
        update(TombstoneRow)
        .where(TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == resource_id)
        .values(action_id=action_id)
        .execution_options(synchronize_session=False)
    )


def mark_error(
    session: Session, resource_type: ResourceType, resource_id: str, reason: str
) -> None:
    """Keep the tombstone of a failed deletion, with the reason (a new DELETE retries it)."""
    session.execute(
        update(TombstoneRow)
        .where(TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == resource_id)
        .values(status=TombstoneStatus.ERROR, reason=reason)
        .execution_options(synchronize_session=False)
    )


def mark_purging(session: Session, tombstone: TombstoneRow, action_id: str) -> None:
    """Hand a stuck deletion to the purge action that clears it."""
    tombstone.status = TombstoneStatus.PURGING
    tombstone.action_id = action_id
    tombstone.reason = "Purge requested by an administrator."


def remove(session: Session, resource_type: ResourceType, resource_id: str) -> int:
    """Delete a tombstone; return how many rows went."""
    result = session.execute(
        delete(TombstoneRow).where(
            TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == resource_id
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def list_all(session: Session, resource_type: ResourceType | None = None) -> Sequence[TombstoneRow]:
    """Every tombstone, oldest first."""
    query = select(TombstoneRow).order_by(TombstoneRow.deleted_at, TombstoneRow.id)
    if resource_type is not None:
        query = query.where(TombstoneRow.resource_type == resource_type)
    return session.scalars(query).all()


def absent(
    resource_type: ResourceType, id_column: QueryableAttribute[T] | ColumnElement[T]
) -> ColumnElement[bool]:
    """A WHERE clause: the row whose id is in ``id_column`` has no tombstone."""
    return ~exists().where(
        and_(TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == id_column)
    )


def hidden_from_agents(resource_type: ResourceType) -> list[ColumnElement[bool]]:
    """WHERE clauses that leave tombstoned resources (and nodes of tombstoned clusters) out."""
    model = ROW_TYPES[resource_type]
    clauses = [absent(resource_type, model.id)]
    if resource_type is ResourceType.NODE:
        clauses.append(absent(ResourceType.CLUSTER, NodeRow.cluster_id))
    return clauses


def summary(session: Session) -> list[tuple[str, str, int, float]]:
    """Open tombstones per (resource type, status): how many, and the oldest ``deleted_at``.

    One grouped query, for the metrics read at scrape time.
    """
    rows = session.execute(
        select(
            TombstoneRow.resource_type,
            TombstoneRow.status,
            func.count(),
            func.min(TombstoneRow.deleted_at),
        ).group_by(TombstoneRow.resource_type, TombstoneRow.status)
    ).all()
    return [(kind, status, int(count), float(oldest)) for kind, status, count, oldest in rows]


def delete_at_once(
    session: Session,
    resource_type: ResourceType,
    row: ResourceRow,
    *,
    requested_by: str,
    now: float,
    keep_tombstones: bool,
    in_use: str,
) -> None:
    """Delete a row that needs no action (a profile, a policy): its tombstone, the row and
    the tombstone again in one savepoint; :class:`ResourceInUse` (``in_use``) when a row
    still refers to it.

    Nothing outside the transaction ever sees this tombstone; it makes two concurrent
    deletes of the same row meet on the unique constraint (the loser waits for the
    winner on PostgreSQL, then finds the row gone). A reference added concurrently
    fails the foreign key: the same answer as an existing reference.
    """
    model = ROW_TYPES[resource_type]
    try:
        with session.begin_nested():
            if keep_tombstones:
                insert(
                    session,
                    resource_type=resource_type,
                    resource_id=row.id,
                    project=row.project,
                    requested_by=requested_by,
                    action_id=None,
                    now=now,
                )
            # A Core statement: the mapper hook does not fire, so the tombstone goes explicitly.
            session.execute(delete(model).where(model.id == row.id))
            remove(session, resource_type, row.id)
    except IntegrityError:
        raise ResourceInUse(in_use) from None
