"""Policy rows by id (creating, listing and their references: store/spec_rows.py)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from herd.store.models import PolicyRow


def get(session: Session, policy_id: str) -> PolicyRow | None:
    return session.get(PolicyRow, policy_id)
