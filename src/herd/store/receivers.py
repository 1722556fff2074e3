"""Receivers and the Alertmanager alerts they acted on.

A webhook receiver's URL carries a secret, and the database keeps only the
secret's SHA-256 digest. The secret itself is derived, not stored: an HMAC under
the webhook key (a file or setting outside the database) of the receiver's id and
a random salt. So whoever may read the receiver sees its URLs in every view, as
Senlin showed ``alarm_url`` (``openstack cluster receiver create`` reads the
receiver back to print it), while a copy of the database alone can neither show
nor forge a working URL. A given secret is hashed and compared with the digest in
constant time; rotating the salt makes the old URLs stop working. Under another
webhook key (the key file lost or replaced) the stored digests still verify the
old URLs, but herd cannot show them again until the secret is rotated.

The alert keys of ``receiver_alerts`` are inserted with a plain INSERT guarded by
a unique constraint, inside a savepoint, so that two deliveries of one
notification racing each other trigger one action.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from collections.abc import Iterable

from sqlalchemy import Select, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from herd.store.models import ReceiverAlertRow, ReceiverRow

SALT_BYTES = 16
#: what an unknown receiver's secret is compared with, so that it costs what a wrong one costs
_NO_DIGEST = hashlib.sha256(b"herd: no such receiver").hexdigest()


def new_salt() -> str:
    """A fresh salt for a receiver's secret: 16 random bytes, hex (32 characters)."""
    return secrets.token_hex(SALT_BYTES)


def derive_secret(key: bytes, receiver_id: str, salt: str) -> str:
    """The secret a receiver's URLs carry: HMAC-SHA256(key, "<id>:<salt>"), URL-safe.

    43 characters of base64url (256 bits), unguessable without the webhook key.
    """
    mac = hmac.new(key, f"{receiver_id}:{salt}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def secret_digest(secret: str) -> str:
    """What the database keeps of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def secret_matches(stored_digest: str | None, given: str | None) -> bool:
    """True when ``given`` is the secret whose digest is ``stored_digest``.

    Digests are compared with :func:`hmac.compare_digest`; a missing receiver
    (``stored_digest`` None) or a missing secret is hashed and compared too, then
    refused, so neither answers faster than a wrong secret.
    """
    expected = stored_digest or _NO_DIGEST
    same = hmac.compare_digest(secret_digest(given or ""), expected)
    return same and stored_digest is not None and bool(given)


def secret_of(row: ReceiverRow, key: bytes) -> str | None:
    """The receiver's secret under this webhook key; None when the key is not the one
    it was made under (or the receiver predates derived secrets), so the URLs cannot
    be shown until the secret is rotated."""
    if not row.secret_salt:
        return None
    secret = derive_secret(key, row.id, row.secret_salt)
    return secret if secret_matches(row.secret_hash, secret) else None


def _set_secret(row: ReceiverRow, key: bytes) -> str:
    row.secret_salt = new_salt()
    secret = derive_secret(key, row.id, row.secret_salt)
    row.secret_hash = secret_digest(secret)
    return secret


def new_receiver(
    *,
    name: str,
    type_: str,
    cluster_id: str | None,
    action: str | None,
    params: dict[str, object],
    user: str,
    project: str,
    now: float,
    domain: str = "",
    webhook_base: str,
    key: bytes,
) -> tuple[ReceiverRow, str]:
    """Build (not add) a receiver row; return it with its secret."""
    row = ReceiverRow(
        id=str(uuid.uuid4()),
        name=name,
        type=type_,
        cluster_id=cluster_id,
        action=action,
        actor={},
        params=params,
        webhook_base=webhook_base,
        user=user,
        project=project,
        domain=domain,
        created_at=now,
        updated_at=None,
    )
    return row, _set_secret(row, key)


def rotate_secret(row: ReceiverRow, key: bytes) -> str:
    """Give the receiver a new secret (the old URLs stop working); return the secret."""
    return _set_secret(row, key)


def get_by_id(session: Session, receiver_id: str) -> ReceiverRow | None:
    """The receiver with exactly this id (webhook URLs name receivers by full id)."""
    if len(receiver_id) != 36:
        return None
    return session.get(ReceiverRow, receiver_id)


def select_receivers() -> Select[ReceiverRow]:
    """The query lists start from (the API adds scope, filters, order and paging)."""
    return select(ReceiverRow)


def delete_receiver(session: Session, row: ReceiverRow) -> None:
    """Delete a receiver and the alerts it recorded."""
    session.execute(delete(ReceiverAlertRow).where(ReceiverAlertRow.receiver_id == row.id))
    session.delete(row)


def delete_of_cluster(session: Session, cluster_id: str) -> int:
    """Delete every receiver of a cluster (with the cluster, as Senlin); how many went."""
    rows = session.scalars(select(ReceiverRow).where(ReceiverRow.cluster_id == cluster_id)).all()
    for row in rows:
        delete_receiver(session, row)
    return len(rows)


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


def add(session: Session, row: ReceiverRow) -> None:
    session.add(row)
