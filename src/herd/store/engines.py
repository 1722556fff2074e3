"""The ``engines`` rows: one per running ``herd engine`` (or ``herd serve``) and its heartbeat."""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from herd.store.models import EngineRow


def register(session: Session, engine_id: str, host: str, pid: int, now: float) -> None:
    session.add(EngineRow(id=engine_id, host=host, pid=pid, started_at=now, heartbeat_at=now))


def beat(session: Session, engine_id: str, now: float) -> None:
    session.execute(update(EngineRow).where(EngineRow.id == engine_id).values(heartbeat_at=now))


def remove(session: Session, engine_id: str) -> None:
    row = session.get(EngineRow, engine_id)
    if row is not None:
        session.delete(row)


def ids(session: Session) -> set[str]:
    """Every registered engine, alive or not."""
    return set(session.scalars(select(EngineRow.id)).all())


def others(session: Session, engine_id: str) -> list[EngineRow]:
    """Every engine but ``engine_id`` (the caller judges which are dead)."""
    return list(session.scalars(select(EngineRow).where(EngineRow.id != engine_id)).all())


def liveness_counts(session: Session, dead_before: float) -> dict[str, int]:
    """Engines whose heartbeat is newer than ``dead_before`` (alive) and the others (dead).

    A dead engine's row stays until another engine takes its actions over, so
    ``dead`` above zero for long means nobody is taking over.
    """
    alive = EngineRow.heartbeat_at >= dead_before
    rows = session.execute(select(alive, func.count()).group_by(alive)).all()
    counts = {"alive": 0, "dead": 0}
    for is_alive, count in rows:
        counts["alive" if is_alive else "dead"] += int(count)
    return counts
