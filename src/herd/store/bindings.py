"""Policy bindings (Senlin's ``cluster_policy``): the enabled ones, in the order they run."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import Select, delete, select, update
from sqlalchemy.orm import Session

from herd.store.models import BindingRow, PolicyRow


def enabled_policies(session: Session, cluster_id: str) -> list[tuple[BindingRow, PolicyRow]]:
    """The cluster's enabled bindings and their policies, ascending priority, id breaking ties."""
    rows = session.execute(
        select(BindingRow, PolicyRow)
        .join(PolicyRow, PolicyRow.id == BindingRow.policy_id)
        .where(BindingRow.cluster_id == cluster_id, BindingRow.enabled.is_(True))
        .order_by(BindingRow.priority, BindingRow.id)
    ).all()
    return [(binding, policy) for binding, policy in rows]


def select_cluster_bindings(
    cluster_id: str, policy_name: str | None = None, policy_type: str | None = None
) -> Select[BindingRow]:
    """The query the list of a cluster's bindings starts from, by policy name or type."""
    query = select(BindingRow).where(BindingRow.cluster_id == cluster_id)
    if policy_name is not None or policy_type is not None:
        query = query.join(PolicyRow, PolicyRow.id == BindingRow.policy_id)
        if policy_name is not None:
            query = query.where(PolicyRow.name == policy_name)
        if policy_type is not None:
            query = query.where(PolicyRow.type == policy_type)
    return query


def get_binding(session: Session, cluster_id: str, policy_id: str) -> BindingRow | None:
    return session.scalars(
        select(BindingRow).where(
            BindingRow.cluster_id == cluster_id, BindingRow.policy_id == policy_id
        )
    ).first()


def touch_last_op(session: Session, binding_ids: Sequence[str], now: float) -> None:
    """Stamp when these bindings last let an action through (a scaling policy's cooldown)."""
    if binding_ids:
        session.execute(
            update(BindingRow).where(BindingRow.id.in_(list(binding_ids))).values(last_op=now)
        )


def merge_data(session: Session, updates: Mapping[str, Mapping[str, object]]) -> None:
    """Merge keys into bindings' stored data (the health policy records its suspension)."""
    for binding_id, values in updates.items():
        row = session.get(BindingRow, binding_id)
        if row is not None:
            # A new dict: the JSON column only notices a change of object.
            row.data = {**(row.data or {}), **values}


def of_cluster(session: Session, cluster_id: str) -> Sequence[BindingRow]:
    return session.scalars(select(BindingRow).where(BindingRow.cluster_id == cluster_id)).all()


def add(
    session: Session, cluster_id: str, policy_id: str, *, enabled: bool, priority: int
) -> BindingRow:
    row = BindingRow(
        id=str(uuid.uuid4()),
        cluster_id=cluster_id,
        policy_id=policy_id,
        enabled=enabled,
        priority=priority,
        data={},
        last_op=None,
    )
    session.add(row)
    return row


def remove(session: Session, cluster_id: str, policy_id: str) -> bool:
    """Detach one policy; False when it was not attached."""
    result = session.execute(
        delete(BindingRow).where(
            BindingRow.cluster_id == cluster_id, BindingRow.policy_id == policy_id
        )
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def remove_all(session: Session, cluster_id: str) -> None:
    session.execute(delete(BindingRow).where(BindingRow.cluster_id == cluster_id))


def get(session: Session, binding_id: str) -> BindingRow | None:
    return session.get(BindingRow, binding_id)
