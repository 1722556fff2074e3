"""The ``engines`` rows as the metrics see them: how many engines are alive."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from herd.store.models import EngineRow


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
