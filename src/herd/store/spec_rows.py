"""Profiles and policies: building their rows, listing them, and what still refers to them."""

from __future__ import annotations

import uuid
from typing import TypeVar

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from herd.store.models import BindingRow, ClusterRow, NodeRow, PolicyRow, ProfileRow

SpecRow = TypeVar("SpecRow", ProfileRow, PolicyRow)


def new_spec_row(
    model: type[SpecRow],
    *,
    stored: bool,
    name: str,
    type_name: str,
    spec: dict[str, object],
    user: str,
    project: str,
    now: float,
    domain: str = "",
    **own: object,
) -> SpecRow:
    """Build (not add) a profile or policy row; ``stored`` False gives it no id (a validation)."""
    return model(
        id=str(uuid.uuid4()) if stored else None,
        name=name,
        type=type_name,
        spec=spec,
        user=user,
        project=project,
        domain=domain,
        created_at=now,
        updated_at=None,
        **own,
    )


def profile_in_use(session: Session, profile_id: str) -> bool:
    """A cluster or a node still uses this profile."""
    return bool(
        session.scalar(
            select(
                exists().where(ClusterRow.profile_id == profile_id)
                | exists().where(NodeRow.profile_id == profile_id)
            )
        )
    )


def policy_in_use(session: Session, policy_id: str) -> bool:
    """The policy is still attached to a cluster."""
    return bool(session.scalar(select(exists().where(BindingRow.policy_id == policy_id))))


def add(session: Session, row: ProfileRow | PolicyRow) -> None:
    session.add(row)
