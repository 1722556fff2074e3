"""Health leases: which engine checks which cluster, and the health bindings they follow.

One row per cluster (the primary key makes two holders impossible). An engine
claims a free lease with an insert that does nothing on conflict, takes one
over from a dead engine with a compare-and-set on the old holder, and renews
its own by updating ``renewed_at``. Each function runs in the caller's
transaction and never commits.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from herd.store.models import BindingRow, HealthLeaseRow, PolicyRow

HEALTH_POLICY_TYPE = "senlin.policy.health"


@dataclass(frozen=True, slots=True)
class HealthBinding:
    """A health policy attached to a cluster, as the manager needs it."""

    cluster_id: str
    binding_id: str
    policy_id: str
    policy_name: str
    spec: dict[str, object]
    enabled: bool
    data: dict[str, object]


def health_bindings(
    session: Session, cluster_ids: Collection[str] | None = None
) -> list[HealthBinding]:
    """Every health policy binding (enabled or not), optionally of some clusters only."""
    query = (
        select(BindingRow, PolicyRow)
        .join(PolicyRow, PolicyRow.id == BindingRow.policy_id)
        .where(PolicyRow.type.like(f"{HEALTH_POLICY_TYPE}-%"))
        .order_by(BindingRow.cluster_id)
    )
    if cluster_ids is not None:
        query = query.where(BindingRow.cluster_id.in_(list(cluster_ids)))
    return [
        HealthBinding(
            cluster_id=binding.cluster_id,
            binding_id=binding.id,
            policy_id=policy.id,
            policy_name=policy.name,
            spec=dict(policy.spec or {}),
            enabled=binding.enabled,
            data=dict(binding.data or {}),
        )
        for binding, policy in session.execute(query).all()
    ]


def all_leases(session: Session) -> Sequence[HealthLeaseRow]:
    return session.scalars(select(HealthLeaseRow).order_by(HealthLeaseRow.cluster_id)).all()


def lease_of(session: Session, cluster_id: str) -> HealthLeaseRow | None:
    return session.get(HealthLeaseRow, cluster_id)


def claim(
    session: Session,
    cluster_id: str,
    engine_id: str,
    now: float,
    *,
    replace: str | None = None,
) -> bool:
    """Take the lease of ``cluster_id`` for ``engine_id``; True when it is ours afterwards.

    Without ``replace`` only a free lease is taken. With ``replace`` (a holder the
    caller found dead) the lease is taken over only if that engine still holds it,
    so of several engines taking over at once exactly one wins.
    """
    if replace is None:
        dialect = session.get_bind().dialect.name
        values = {
            "cluster_id": cluster_id,
            "engine_id": engine_id,
            "acquired_at": now,
            "renewed_at": now,
        }
        if dialect == "postgresql":
            statement: postgresql.Insert | sqlite.Insert = postgresql.insert(HealthLeaseRow).values(
                **values
            )
        else:
            statement = sqlite.insert(HealthLeaseRow).values(**values)
        # RETURNING, not rowcount: psycopg reports -1 for an ORM-executed INSERT.
        inserted = session.execute(
            statement.on_conflict_do_nothing(index_elements=["cluster_id"]).returning(
                HealthLeaseRow.cluster_id
            )
        ).first()
        return inserted is not None
    result = session.execute(
        update(HealthLeaseRow)
        .where(HealthLeaseRow.cluster_id == cluster_id, HealthLeaseRow.engine_id == replace)
        .values(engine_id=engine_id, acquired_at=now, renewed_at=now)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def renew(session: Session, engine_id: str, now: float) -> list[str]:
    """Renew every lease ``engine_id`` holds; return their cluster ids."""
    session.execute(
        update(HealthLeaseRow).where(HealthLeaseRow.engine_id == engine_id).values(renewed_at=now)
    )
    return list(
        session.scalars(
            select(HealthLeaseRow.cluster_id).where(HealthLeaseRow.engine_id == engine_id)
        ).all()
    )


def holds(session: Session, cluster_id: str, engine_id: str) -> bool:
    """Whether ``engine_id`` holds the lease (read with FOR UPDATE on PostgreSQL).

    Called in the transaction that starts a recovery, so a lease lost meanwhile
    stops the write.
    """
    query = select(HealthLeaseRow.engine_id).where(HealthLeaseRow.cluster_id == cluster_id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    return session.scalar(query) == engine_id


def release(session: Session, cluster_id: str, engine_id: str) -> bool:
    """Give a lease up (the cluster lost its health policy, or the engine stops)."""
    result = session.execute(
        delete(HealthLeaseRow).where(
            HealthLeaseRow.cluster_id == cluster_id, HealthLeaseRow.engine_id == engine_id
        )
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def release_all(session: Session, engine_id: str) -> int:
    result = session.execute(delete(HealthLeaseRow).where(HealthLeaseRow.engine_id == engine_id))
    return int(result.rowcount)  # type: ignore[attr-defined]


def drop_orphans(session: Session, cluster_ids: Collection[str]) -> int:
    """Remove leases of clusters that no longer have a health policy."""
    if not cluster_ids:
        return 0
    result = session.execute(
        delete(HealthLeaseRow).where(HealthLeaseRow.cluster_id.in_(list(cluster_ids)))
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
