"""Receivers and the Alertmanager alerts they acted on.

A webhook receiver's URL carries a secret. The secret is stored as it is, because
the URL is shown to whoever may read the receiver, as Senlin showed ``alarm_url``
(``openstack cluster receiver create`` reads the receiver back to print it); a given
secret is compared with the stored one in constant time, and rotating it makes the
old URLs stop working. The alert keys of
``receiver_alerts`` are inserted with a plain INSERT guarded by a unique
constraint, inside a savepoint, so that two deliveries of one notification racing
each other trigger one action.
"""

from __future__ import annotations

import hmac
import secrets
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Select, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from herd.store.models import ReceiverAlertRow, ReceiverRow

SECRET_BYTES = 32
#: what an unknown receiver id is compared with, so that it costs what a wrong secret costs
_NO_SECRET = "herd: no such receiver, compared so that it costs what a wrong secret costs"


def new_secret() -> str:
    """A fresh webhook secret: 32 random bytes, URL-safe (43 characters)."""
    return secrets.token_urlsafe(SECRET_BYTES)


def secret_matches(stored: str | None, given: str | None) -> bool:
    """True when ``given`` is the receiver's secret ``stored``.

    The two are compared with :func:`hmac.compare_digest` (as bytes, so any text is
    accepted); a missing receiver (``stored`` None) or a missing secret is compared
    too, then refused, so neither answers faster than a wrong secret.
    """
    expected = (stored or _NO_SECRET).encode("utf-8")
    same = hmac.compare_digest((given or "").encode("utf-8"), expected)
    return same and stored is not None and bool(given)


def new_receiver(
    *,
    name: str,
    type_: str,
    cluster_id: str | None,
    action: str | None,
    params: dict[str, Any],
    user: str,
    project: str,
    now: float,
) -> tuple[ReceiverRow, str]:
    """Build (not add) a receiver row; return it with its secret."""
    secret = new_secret()
    row = ReceiverRow(
        id=str(uuid.uuid4()),
        name=name,
        type=type_,
        cluster_id=cluster_id,
        action=action,
        actor={},
        params=params,
        channel={},
        secret=secret,
        user=user,
        project=project,
        domain="",
        created_at=now,
        updated_at=None,
    )
    return row, secret


def rotate_secret(row: ReceiverRow) -> str:
    """Give the receiver a new secret (the old URL stops working); return the secret."""
    secret = new_secret()
    row.secret = secret
    return secret


def get_by_id(session: Session, receiver_id: str) -> ReceiverRow | None:
    """The receiver with exactly this id (webhook URLs name receivers by full id)."""
    if len(receiver_id) != 36:
        return None
    return session.get(ReceiverRow, receiver_id)


def select_receivers() -> Select[Any]:
    """The query lists start from (the API adds scope, filters, order and paging)."""
    return select(ReceiverRow)


def delete_receiver(session: Session, row: ReceiverRow) -> None:
    """Delete a receiver and the alerts it recorded."""
    session.execute(delete(ReceiverAlertRow).where(ReceiverAlertRow.receiver_id == row.id))
    session.delete(row)


def record_new_alerts(
    session: Session, receiver_id: str, keys: Iterable[str], now: float
) -> list[str]:
    """Record alert keys not seen before for this receiver; return the ones that were new.

    A key already stored, or inserted meanwhile by a concurrent delivery of the same
    notification (the unique constraint), is not new.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return []
    seen = set(
        session.scalars(
            select(ReceiverAlertRow.alert_key).where(
                ReceiverAlertRow.receiver_id == receiver_id,
                ReceiverAlertRow.alert_key.in_(wanted),
            )
        ).all()
    )
    added: list[str] = []
    for key in wanted:
        if key in seen:
            continue
        try:
            with session.begin_nested():
                session.add(
                    ReceiverAlertRow(
                        receiver_id=receiver_id, alert_key=key, action_id=None, received_at=now
                    )
                )
        except IntegrityError:
            continue
        added.append(key)
    return added


def link_alerts(session: Session, receiver_id: str, keys: Iterable[str], action_id: str) -> None:
    """Note which action the recorded alerts started."""
    wanted = list(keys)
    if wanted:
        session.execute(
            update(ReceiverAlertRow)
            .where(
                ReceiverAlertRow.receiver_id == receiver_id,
                ReceiverAlertRow.alert_key.in_(wanted),
            )
            .values(action_id=action_id)
        )
