"""Acting for the user on the cloud: openstacksdk connections scoped by a Keystone trust.

With ``nova_trusts`` (``auth: keystone`` only) the ``os.nova.server`` driver never uses
the clouds.yaml credentials for a node. The API made a trust from the user who created
the cluster or node (the trustor) to herd's service user (the trustee), scoped to the
user's project, with the user's roles and impersonation, as Senlin did; the store keeps
its id per user and project. For each node the driver asks its :class:`TrustSource`
which trust acts for it, and authenticates as herd's service user with that trust
(keystoneauth's ``v3.Password(..., trust_id=...)``): Nova sees the user in the user's
project, so the servers land there.

When the trust cannot be used (deleted, its user deleted or disabled, its project gone)
Keystone refuses the authentication and the call fails with :class:`TrustNotValid`,
naming the user and project; nothing falls back to other credentials.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from herd.drivers.nova.sdk import NovaConnection
from herd.errors import DriverError

if TYPE_CHECKING:
    from keystoneauth1.access import AccessInfoV3
    from keystoneauth1.session import Session as KeystoneSession


@dataclass(frozen=True)
class NodeTrust:
    """Whose trust acts for a node; ``trust_id`` None: no trust is stored for them."""

    user: str
    project: str
    trust_id: str | None


class TrustSource(Protocol):
    """Where the driver learns which trust acts for a node (the store, in herd)."""

    def trust_for_node(self, node_id: str) -> NodeTrust: ...


@dataclass(frozen=True)
class TrustAuth:
    """herd's service user (the trustee): the ``keystone_*`` settings."""

    auth_url: str
    username: str
    password: str
    user_domain_name: str = "Default"
    #: the region of a node that names none (``keystone_region_name``)
    region_name: str | None = None
    #: seconds one request to the cloud may take (``nova_request_timeout``)
    request_timeout: float = 60.0

    def __repr__(self) -> str:  # never the password
        return f"TrustAuth(auth_url={self.auth_url!r}, username={self.username!r})"


def no_trust_reason(user: str, project: str) -> str:
    """Why a node cannot be acted on: no trust was ever stored for its owner."""
    return (
        f"herd holds no Keystone trust from user {user or '(unknown)'} in project "
        f"{project or '(unknown)'}, so it cannot act for them on the cloud (the trust is made "
        "when that user creates the cluster or node with their own Keystone token)"
    )


def not_valid_reason(user: str, project: str, detail: str) -> str:
    """Why a node cannot be acted on: Keystone refused the owner's trust."""
    return (
        f"the Keystone trust from user {user} in project {project} is no longer valid "
        f"(Keystone refused it: {detail}); the trust or its user was deleted or disabled, "
        "and herd does not act with any other credentials"
    )


class TrustNotValid(DriverError):
    """Keystone refused the trust a node acts through (never retried)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def _refusal(exc: BaseException) -> str | None:
    """What Keystone said, when ``exc`` is Keystone refusing the trust (else None)."""
    status = getattr(exc, "http_status", None) or getattr(exc, "status_code", None)
    if status in (401, 403, 404):
        message = str(getattr(exc, "message", None) or exc).strip()
        # keystoneauth's text already ends with the status (and the request id)
        return message if f"(HTTP {status})" in message else f"{message} (HTTP {status})"
    return None


class TrustedConnections:
    """openstacksdk connections per (trust, region), made with herd's service user."""

    def __init__(self, auth: TrustAuth, source: TrustSource) -> None:
        self.auth = auth
        self.source = source
        self._lock = threading.Lock()
        self._connections: dict[tuple[str, str | None], NovaConnection] = {}

    def connection(self, node_id: str, region: str | None) -> NovaConnection:
        """The connection acting for ``node_id``'s owner in ``region``.

        Raises:
            DriverError: no trust is stored for the node's owner.
            TrustNotValid: Keystone refuses the trust (now or on a later request).
        """
        trust = self.source.trust_for_node(node_id)
        if trust.trust_id is None:
            raise DriverError(no_trust_reason(trust.user, trust.project), retryable=False)
        region = region or self.auth.region_name
        key = (trust.trust_id, region)
        with self._lock:
            connection = self._connections.get(key)
            if connection is None:
                connection = self._connect(trust, region)
                self._connections[key] = connection
        return connection

    def recheck(self, node_id: str, region: str | None) -> None:
        """Ask Keystone for a new token through ``node_id``'s trust now.

        A service that caches token validations (keystonemiddleware keeps them for
        minutes) accepts the token herd holds after the trust or its user is gone; Heat
        then fails the create with an unrelated message. Herd asks before such a create.

        Raises:
            DriverError: no trust is stored for the node's owner.
            TrustNotValid: Keystone refuses the trust.
        """
        session = getattr(self.connection(node_id, region), "session", None)
        if session is None or session.auth is None:
            return
        session.auth.invalidate()
        session.get_token()

    def _connect(self, trust: NodeTrust, region: str | None) -> NovaConnection:
        import openstack.connection  # heavy imports, only for those who use trusts
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        owner = (trust.user, trust.project)

        class TrustPassword(v3.Password):
            """Keystone's refusal of the trust becomes :class:`TrustNotValid`: a 401 or
            404 from it must never look like Nova's answer (a 404 would read as "gone")."""

            def get_auth_ref(self, session: KeystoneSession) -> AccessInfoV3:
                try:
                    return super().get_auth_ref(session)
                except Exception as exc:
                    detail = _refusal(exc)
                    if detail is None:
                        raise
                    raise TrustNotValid(not_valid_reason(*owner, detail)) from None

        plugin = TrustPassword(
            auth_url=self.auth.auth_url,
            username=self.auth.username,
            password=self.auth.password,
            user_domain_name=self.auth.user_domain_name,
            trust_id=trust.trust_id,
        )
        return openstack.connection.Connection(
            session=session.Session(auth=plugin, timeout=self.auth.request_timeout),
            region_name=region,
        )

    def close(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        for connection in connections:
            with contextlib.suppress(Exception):  # best effort, as NovaCloud.close
                connection.close()
