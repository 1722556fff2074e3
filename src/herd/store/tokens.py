"""API tokens: only the SHA-256 of each secret is stored.

A token belongs to one project and carries one role (``admin``, ``member`` or
``agent``). An agent token may also carry the regions it reads (``regions``; None: every
region). The secret is shown once, when the token is created.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable, Sequence

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from herd.errors import InvalidRequest
from herd.store.models import TokenRow
from herd.types import Role

SECRET_PREFIX = "herd_"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    session: Session,
    project: str,
    role: str,
    name: str,
    now: float,
    *,
    expires_at: float | None = None,
    regions: Iterable[str] | None = None,
) -> tuple[TokenRow, str]:
    """Add a token row to the session and return it with its secret (shown only once).

    ``regions`` limits an agent token's reads to those regions; None leaves it every
    region (``herd token create`` asks the operator to say so with ``--all-regions``).

    Raises:
        InvalidRequest: the role is unknown, the project is empty, or ``regions`` is
            given for a role other than agent, empty, or names an empty region.
    """
    try:
        checked_role = Role(role)
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise InvalidRequest(
            f"Invalid role '{role}': must be one of {allowed}.", field="role"
        ) from None
    if not project:
        raise InvalidRequest("A token needs a project.", field="project")
    checked_regions = None if regions is None else _regions(checked_role, regions)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    row = TokenRow(
        id=str(uuid.uuid4()),
        token_hash=hash_secret(secret),
        name=name,
        project=project,
        role=checked_role.value,
        created_at=now,
        expires_at=expires_at,
        regions=checked_regions,
    )
    session.add(row)
    session.flush()
    return row, secret


def _regions(role: Role, regions: Iterable[str]) -> list[str]:
    """The distinct region names of an agent token, in the order given."""
    if role is not Role.AGENT:
        raise InvalidRequest(
            f"Only agent tokens carry regions; a {role.value} token sees every region.",
            field="region",
        )
    names: list[str] = []
    for region in regions:
        name = region.strip()
        if not name:
            raise InvalidRequest("A region name must not be empty.", field="region")
        if name not in names:
            names.append(name)
    if not names:
        raise InvalidRequest("An agent token limited to regions needs one.", field="region")
    return names


def lookup(session: Session, secret: str, now: float | None = None) -> TokenRow | None:
    """The token whose secret is ``secret``, unless it is unknown or expired."""
    row = session.scalars(
        select(TokenRow).where(TokenRow.token_hash == hash_secret(secret))
    ).first()
    if row is None:
        return None
    if now is not None and row.expires_at is not None and row.expires_at <= now:
        return None
    return row


def list_tokens(session: Session, project: str | None = None) -> Sequence[TokenRow]:
    query = select(TokenRow).order_by(TokenRow.created_at, TokenRow.id)
    if project is not None:
        query = query.where(TokenRow.project == project)
    return session.scalars(query).all()


MIN_PREFIX = 8


def revoke(session: Session, token_id: str) -> bool:
    """Delete a token by its id, or by a prefix of it of at least 8 characters that no
    other token's id shares; True when one was deleted.

    Raises:
        InvalidRequest: the id is shorter than 8 characters and no token has it exactly.
    """
    token_id = token_id.strip()
    exact = session.scalars(select(TokenRow.id).where(TokenRow.id == token_id)).first()
    if exact is not None:
        session.execute(delete(TokenRow).where(TokenRow.id == exact))
        return True
    if len(token_id) < MIN_PREFIX:
        raise InvalidRequest(
            f"Give a token's id or at least {MIN_PREFIX} characters of it, got '{token_id}'.",
            field="token_id",
        )
    ids = session.scalars(
        select(TokenRow.id).where(TokenRow.id.startswith(token_id, autoescape=True)).limit(2)
    ).all()
    if len(ids) != 1:
        return False
    session.execute(delete(TokenRow).where(TokenRow.id == ids[0]))
    return True
