"""Service records: API processes register here; engines are read from ``engines``.

``GET /v1/services`` lists both. Each API process writes a heartbeat row while it
runs and deletes it when it stops; a row whose heartbeat is older than the dead
threshold is shown as ``down`` until it is forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from herd.store.models import ApiServiceRow, EngineRow

API_BINARY = "herd-api"
ENGINE_BINARY = "herd-engine"


@dataclass(frozen=True)
class ServiceRecord:
    """One API process or engine as the services list shows it."""

    id: str
    host: str
    binary: str
    pid: int
    started_at: float
    heartbeat_at: float


def register_api(session: Session, service_id: str, host: str, pid: int, now: float) -> None:
    """Add the row of an API process that is starting."""
    session.add(ApiServiceRow(id=service_id, host=host, pid=pid, started_at=now, heartbeat_at=now))


def beat_api(session: Session, service_id: str, host: str, pid: int, now: float) -> None:
    """Refresh an API process's heartbeat (re-adding its row if somebody forgot it)."""
    changed = session.execute(
        update(ApiServiceRow).where(ApiServiceRow.id == service_id).values(heartbeat_at=now)
    ).rowcount  # type: ignore[attr-defined]
    if not changed:
        register_api(session, service_id, host, pid, now)


def unregister_api(session: Session, service_id: str) -> None:
    session.execute(delete(ApiServiceRow).where(ApiServiceRow.id == service_id))


def forget_api_before(session: Session, before: float) -> int:
    """Delete API rows whose heartbeat stopped before ``before``; return how many."""
    result = session.execute(delete(ApiServiceRow).where(ApiServiceRow.heartbeat_at < before))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def all_services(session: Session) -> list[ServiceRecord]:
    """Engines first, then API processes, each oldest first."""
    records = [
        ServiceRecord(row.id, row.host, ENGINE_BINARY, row.pid, row.started_at, row.heartbeat_at)
        for row in session.scalars(select(EngineRow).order_by(EngineRow.started_at)).all()
    ]
    records += [
        ServiceRecord(row.id, row.host, API_BINARY, row.pid, row.started_at, row.heartbeat_at)
        for row in session.scalars(select(ApiServiceRow).order_by(ApiServiceRow.started_at)).all()
    ]
    return records
