"""Profile rows by id (creating, listing and their references: store/spec_rows.py)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.store.models import ProfileRow


def get(session: Session, profile_id: str) -> ProfileRow | None:
    return session.get(ProfileRow, profile_id)


def get_many(session: Session, profile_ids: Collection[str]) -> dict[str, ProfileRow]:
    if not profile_ids:
        return {}
    rows = session.scalars(select(ProfileRow).where(ProfileRow.id.in_(list(profile_ids))))
    return {row.id: row for row in rows.all()}


def type_of(session: Session, profile_id: str) -> str | None:
    return session.scalar(select(ProfileRow.type).where(ProfileRow.id == profile_id))


def add(session: Session, row: ProfileRow) -> None:
    session.add(row)
    session.flush()  # node rows refer to it, and no ORM relationship orders the inserts
