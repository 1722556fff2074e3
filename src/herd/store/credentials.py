"""The Keystone trusts herd acts through, per user and project (Senlin's credentials).

:class:`StoredTrusts` is what the ``os.nova.server`` driver asks (its ``TrustSource``):
which trust acts for a node. A cluster's members act for the cluster's owner (who
created it, and whose trust was made then), whoever asked for the action that made
them; a node outside any cluster acts for its own creator. Nothing else is ever tried:
without a stored trust the driver fails, naming the user and project.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from herd.config import Settings
from herd.drivers.nova.trusts import NodeTrust, TrustAuth, TrustedConnections
from herd.errors import InvalidRequest
from herd.store.database import Database
from herd.store.models import ClusterRow, CredentialRow, NodeRow


def get_trust(session: Session, user: str, project: str) -> str | None:
    """The stored trust id of ``user`` in ``project``, if any."""
    row = session.get(CredentialRow, (user, project))
    return row.trust_id if row is not None else None


def save_trust(session: Session, user: str, project: str, trust_id: str, now: float) -> None:
    """Store (or replace) the trust of ``user`` in ``project``."""
    row = session.get(CredentialRow, (user, project))
    if row is None:
        session.add(CredentialRow(user=user, project=project, trust_id=trust_id, created_at=now))
    else:
        row.trust_id, row.created_at = trust_id, now
    session.flush()


def forget_trust(session: Session, user: str, project: str) -> None:
    """Drop the stored trust of ``user`` in ``project`` (nothing when there is none)."""
    session.execute(
        delete(CredentialRow).where(CredentialRow.user == user, CredentialRow.project == project)
    )


def trust_for_node(session: Session, node_id: str) -> NodeTrust:
    """Whose trust acts for ``node_id``: its cluster's owner, else its own creator.

    A node that no longer exists has no owner: its trust is None (the driver refuses).
    """
    found = session.execute(
        select(NodeRow.user, NodeRow.project, ClusterRow.user, ClusterRow.project)
        .outerjoin(ClusterRow, ClusterRow.id == NodeRow.cluster_id)
        .where(NodeRow.id == node_id)
    ).first()
    if found is None:
        return NodeTrust(user="", project="", trust_id=None)
    node_user, node_project, cluster_user, cluster_project = found
    user = cluster_user if cluster_user is not None else node_user
    project = cluster_project if cluster_project is not None else node_project
    return NodeTrust(user=user, project=project, trust_id=get_trust(session, user, project))


class StoredTrusts:
    """The driver's ``TrustSource``: reads the store for each node it acts on."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def trust_for_node(self, node_id: str) -> NodeTrust:
        with self._database.read() as session:
            return trust_for_node(session, node_id)


def trusted_connections(settings: Settings, database: Database) -> TrustedConnections | None:
    """The Nova driver's trusts when ``nova_trusts`` is on (None: clouds.yaml as before).

    Raises:
        InvalidRequest: ``nova_trusts`` without ``auth: keystone`` and its service user.
    """
    if not settings.nova_trusts:
        return None
    password = settings.keystone_password
    if settings.auth != "keystone" or not settings.keystone_auth_url or password is None:
        raise InvalidRequest(
            "nova_trusts needs auth 'keystone' with HERD_KEYSTONE_AUTH_URL and "
            "HERD_KEYSTONE_PASSWORD: the trusts are made to herd's Keystone service user.",
            field="nova_trusts",
        )
    auth = TrustAuth(
        auth_url=settings.keystone_auth_url,
        username=settings.keystone_username,
        password=password.get_secret_value(),
        user_domain_name=settings.keystone_user_domain_name,
        region_name=settings.keystone_region_name,
        request_timeout=settings.nova_request_timeout,
    )
    return TrustedConnections(auth, StoredTrusts(database))
