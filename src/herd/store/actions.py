"""Action rows: creation, claiming, status changes and dependencies."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Row, exists, or_, select, update
from sqlalchemy.orm import Session

from herd.observability import context as log_context
from herd.store.bulk import chunked, insert_rows, update_rows
from herd.store.models import ActionRow, DependencyRow, NodeRow
from herd.store.wakeups import announce_ready
from herd.types import (
    ACTIVE_ACTION_STATUSES,
    ActionCause,
    ActionControl,
    ActionName,
    ActionStatus,
)


def action_name(action: ActionName, target: str) -> str:
    """Senlin's action names: ``cluster_scale_in_<id8>``, ``node_delete_<id8>``."""
    return f"{action.lower()}_{target[:8]}"


def action_values(
    *,
    action: ActionName,
    target: str,
    cluster_id: str | None,
    project: str,
    user: str = "",
    cause: ActionCause = ActionCause.RPC,
    inputs: dict[str, object] | None = None,
    data: dict[str, object] | None = None,
    status: ActionStatus = ActionStatus.READY,
    parent_id: str | None = None,
    owner: str | None = None,
    timeout: int = 3600,
    now: float,
) -> dict[str, object]:
    """The column values of a new action row (for bulk inserts and :func:`new_action`).

    The row carries the request id of the log context: the API request that is creating
    it, or (in the engine, which binds the running action's id) the request behind its
    parent, so every action a request caused can be found from the request id.
    """
    return {
        "id": str(uuid.uuid4()),
        "name": action_name(action, target),
        "cluster_id": cluster_id,
        "target": target,
        "action": action,
        "cause": cause,
        "owner": owner,
        "parent_id": parent_id,
        "interval": -1,
        "timeout": timeout,
        "status": status,
        "status_reason": "",
        "inputs": inputs or {},
        "outputs": {},
        "data": data or {},
        "steps": {},
        "user": user,
        "project": project,
        "domain": "",
        "created_at": now,
        "updated_at": now,
        "retries": 0,
        "request_id": log_context.request_id.get(),
    }


def new_action(
    *,
    action: ActionName,
    target: str,
    cluster_id: str | None,
    project: str,
    user: str = "",
    cause: ActionCause = ActionCause.RPC,
    inputs: dict[str, object] | None = None,
    data: dict[str, object] | None = None,
    status: ActionStatus = ActionStatus.READY,
    parent_id: str | None = None,
    owner: str | None = None,
    timeout: int = 3600,
    now: float,
) -> ActionRow:
    """Build (not add) an action row."""
    return ActionRow(
        **action_values(
            action=action,
            target=target,
            cluster_id=cluster_id,
            project=project,
            user=user,
            cause=cause,
            inputs=inputs,
            data=data,
            status=status,
            parent_id=parent_id,
            owner=owner,
            timeout=timeout,
            now=now,
        )
    )


def insert_actions(session: Session, rows: Sequence[dict[str, object]], parent_id: str) -> None:
    """Insert many action rows and make ``parent_id`` depend on each, in two statements."""
    if not rows:
        return
    insert_rows(session, ActionRow, rows)
    insert_rows(
        session, DependencyRow, [{"depended": row["id"], "dependent": parent_id} for row in rows]
    )


def add_dependency(session: Session, depended: str, dependent: str) -> None:
    session.add(DependencyRow(depended=depended, dependent=dependent))


def dependencies(session: Session, action_id: str) -> tuple[list[str], list[str]]:
    """Return (depends_on, depended_by) action ids."""
    on = session.scalars(
        select(DependencyRow.depended).where(DependencyRow.dependent == action_id)
    ).all()
    by = session.scalars(
        select(DependencyRow.dependent).where(DependencyRow.depended == action_id)
    ).all()
    return list(on), list(by)


def active_actions_on(session: Session, target: str) -> Sequence[ActionRow]:
    """Actions on ``target`` that are queued or running (Senlin's conflict check)."""
    return session.scalars(
        select(ActionRow).where(
            ActionRow.target == target,
            ActionRow.status.in_(list(ACTIVE_ACTION_STATUSES)),
        )
    ).all()


def claim_ready(session: Session, engine_id: str, limit: int, now: float) -> list[str]:
    """The ids of :func:`claim_ready_rows`."""
    return [row.id for row in claim_ready_rows(session, engine_id, limit, now)]


def claim_ready_rows(session: Session, engine_id: str, limit: int, now: float) -> list[ActionRow]:
    """Claim up to ``limit`` top-level READY actions for ``engine_id``, oldest first.

    One statement, one round trip: an UPDATE of the candidates, which are read once with
    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL so that engines claiming at the same time
    take different rows instead of queueing behind each other. The UPDATE repeats the
    compare-and-set on (status, owner), so an action is never claimed twice (on SQLite
    the write transaction keeps every other writer out anyway). The claimed rows come back
    as they are after the claim, so the runner does not read them again.
    """
    if limit <= 0:
        return []
    candidates = (
        select(ActionRow.id)
        .where(
            ActionRow.status == ActionStatus.READY,
            ActionRow.owner.is_(None),
            ActionRow.parent_id.is_(None),
        )
        .order_by(ActionRow.created_at)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    # A CTE, materialized: PostgreSQL may run a LIMIT subquery of a WHERE once per row
    # it checks, and each run skips the rows the last one locked (a claim of 2 took 5).
    picked = candidates.cte("picked").prefix_with("MATERIALIZED", dialect="postgresql")
    claimed = session.scalars(
        update(ActionRow)
        .where(
            ActionRow.id.in_(select(picked.c.id)),
            ActionRow.status == ActionStatus.READY,
            ActionRow.owner.is_(None),
        )
        .values(
            owner=engine_id,
            status=ActionStatus.RUNNING,
            status_reason="The action is being processed.",
            start_time=now,
            updated_at=now,
        )
        .returning(ActionRow)
        .execution_options(synchronize_session=False)
    ).all()
    # RETURNING has no order: the oldest goes to the worker pool first.
    return sorted(claimed, key=lambda row: row.created_at or 0.0)


def set_status(
    session: Session,
    action_id: str,
    status: ActionStatus,
    reason: str,
    now: float,
    **values: object,
) -> None:
    extra: dict[str, object] = dict(values)
    if status.is_final:
        extra.setdefault("end_time", now)
        extra.setdefault("owner", None)  # as Senlin: a finished action belongs to no engine
    session.execute(
        update(ActionRow)
        .where(ActionRow.id == action_id)
        .values(status=status.value, status_reason=reason, updated_at=now, **extra)
    )


def has_children(session: Session, parent_id: str) -> bool:
    """Whether ``parent_id`` has stored a plan of child actions: one EXISTS, no child row read
    (a scale of 10,000 nodes has as many)."""
    return bool(session.scalar(select(exists().where(ActionRow.parent_id == parent_id))))


def children(session: Session, parent_id: str) -> Sequence[ActionRow]:
    return session.scalars(
        select(ActionRow).where(ActionRow.parent_id == parent_id).order_by(ActionRow.created_at)
    ).all()


def owned_by(session: Session, engine_ids: Iterable[str]) -> Sequence[ActionRow]:
    ids = list(engine_ids)
    if not ids:
        return []
    return session.scalars(select(ActionRow).where(ActionRow.owner.in_(ids))).all()


def get(session: Session, action_id: str) -> ActionRow | None:
    return session.get(ActionRow, action_id)


def by_prefix(session: Session, cluster_id: str, prefix: str) -> list[ActionRow]:
    """At most two actions of the cluster whose id starts with ``prefix`` (a short id)."""
    query = select(ActionRow).where(
        ActionRow.cluster_id == cluster_id, ActionRow.id.startswith(prefix, autoescape=True)
    )
    return list(session.scalars(query.limit(2)).all())


def get_many(session: Session, action_ids: Iterable[str]) -> Sequence[ActionRow]:
    ids = list(action_ids)
    if not ids:
        return []
    return session.scalars(select(ActionRow).where(ActionRow.id.in_(ids))).all()


def control(session: Session, action_id: str) -> ActionControl | None:
    """The stop request of an action or None."""
    return session.scalar(select(ActionRow.control).where(ActionRow.id == action_id))


def save_progress(
    session: Session,
    action_id: str,
    data: dict[str, object],
    outputs: dict[str, object],
    now: float,
    steps: dict[str, object] | None = None,
) -> None:
    values: dict[str, object] = {"data": data, "outputs": outputs, "updated_at": now}
    if steps is not None:
        values["steps"] = steps
    session.execute(update(ActionRow).where(ActionRow.id == action_id).values(**values))


def unfinished_not_owned_by(session: Session, live_engines: Iterable[str]) -> Sequence[ActionRow]:
    """Queued or running actions owned by an engine outside ``live_engines``."""
    return session.scalars(
        select(ActionRow).where(
            ActionRow.owner.is_not(None),
            ActionRow.owner.not_in(sorted(live_engines)),
            ActionRow.status.in_(list(ACTIVE_ACTION_STATUSES)),
        )
    ).all()


def unfinished_on(session: Session, resource_id: str, except_id: str) -> Sequence[ActionRow]:
    """Unfinished actions targeting ``resource_id`` or running in it (as a cluster)."""
    return session.scalars(
        select(ActionRow).where(
            or_(ActionRow.target == resource_id, ActionRow.cluster_id == resource_id),
            ActionRow.id != except_id,
            ActionRow.status.not_in([s for s in ActionStatus if s.is_final]),
        )
    ).all()


def unfinished_children(session: Session, parent_id: str | None = None) -> Sequence[ActionRow]:
    """Every child action that is queued or running, in any cluster (or of ``parent_id``)."""
    parent = (
        ActionRow.parent_id.is_not(None) if parent_id is None else ActionRow.parent_id == parent_id
    )
    return session.scalars(
        select(ActionRow).where(parent, ActionRow.status.in_(list(ACTIVE_ACTION_STATUSES)))
    ).all()


def add(session: Session, row: ActionRow) -> None:
    """Store an action made by :func:`new_action` (the dispatcher claims it once committed);
    a top-level READY one is announced to the engines of other processes."""
    session.add(row)
    if row.parent_id is None and row.status == ActionStatus.READY:
        announce_ready(session)


def with_target_nodes(
    session: Session, action_ids: Collection[str]
) -> list[tuple[str, str, NodeRow]]:
    """(action id, status, node row) of node actions among ``action_ids`` whose node exists."""
    rows = session.execute(
        select(ActionRow.id, ActionRow.status, NodeRow)
        .join(NodeRow, NodeRow.id == ActionRow.target)
        .where(ActionRow.id.in_(list(action_ids)))
    ).all()
    return [(action_id, status, node) for action_id, status, node in rows]


def verbs_of(session: Session, action_ids: Sequence[str]) -> dict[str, ActionName]:
    """action id -> its verb, for the actions that exist."""
    return {
        action_id: ActionName(action)
        for chunk in chunked(action_ids)
        for action_id, action in session.execute(
            select(ActionRow.id, ActionRow.action).where(ActionRow.id.in_(chunk))
        )
    }


def child_summaries(session: Session, parent_id: str) -> list[Row[Any]]:
    """(id, action, status, status_reason, target, inputs) of every child, plain columns."""
    query = select(
        ActionRow.id,
        ActionRow.action,
        ActionRow.status,
        ActionRow.status_reason,
        ActionRow.target,
        ActionRow.inputs,
    ).where(ActionRow.parent_id == parent_id)
    return list(session.connection().execute(query))


def end_many(session: Session, rows: Sequence[Mapping[str, object]]) -> None:
    """Children ended in a batch (each row: ``id``, status, reason, times), one executemany."""
    update_rows(session, ActionRow, rows)
