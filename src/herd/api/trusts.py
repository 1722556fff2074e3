"""Keystone trusts for ``nova_trusts``: made when a user creates a Nova cluster or node.

Senlin's trust middleware made, for each user and project, a trust from the user (the
trustor) to Senlin's service user (the trustee) with the user's roles and impersonation,
and kept its id in its ``credential`` table; its drivers then acted for the user with it.
herd does the same, but only where it is needed: when a cluster or a node outside any
cluster is created with an ``os.nova.server`` (or ``os.heat.stack``) profile and no trust
is stored yet for the caller in the caller's project (members of a cluster act through
its owner's trust: ``store/credentials.py``). The trust is made with the caller's own
token, before anything is stored, so a refused trust leaves nothing behind. Its id is
never shown.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import httpx

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services.common import find_referenced
from herd.config import Settings
from herd.errors import Forbidden, ServiceUnavailable
from herd.store import credentials
from herd.store.database import IntegrityError
from herd.store.models import ProfileRow
from herd.types import ResourceType

#: the profile types whose drivers act through the trust (``os.heat.stack`` as Nova's)
TRUSTED_PROFILE_TYPES = frozenset({"os.nova.server", "os.heat.stack"})
TIMEOUT = 30.0


def _keystone_said(answer: httpx.Response) -> str:
    try:
        error = answer.json().get("error") or {}
        message = str(error.get("message") or answer.text)
    except ValueError:
        message = answer.text
    return f"{message.strip()} (HTTP {answer.status_code})"


class TrustMaker:
    """Makes trusts from callers to herd's service user, with the callers' own tokens."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._trustee: str | None = None

    @property
    def auth_url(self) -> str:
        return str(self._settings.keystone_auth_url).rstrip("/")

    def trustee_id(self) -> str:
        """herd's service user's id (asked once: a password login as that user)."""
        with self._lock:
            if self._trustee is None:
                settings = self._settings
                password = settings.keystone_password
                body = {
                    "auth": {
                        "identity": {
                            "methods": ["password"],
                            "password": {
                                "user": {
                                    "name": settings.keystone_username,
                                    "domain": {"name": settings.keystone_user_domain_name},
                                    "password": password.get_secret_value() if password else "",
                                }
                            },
                        }
                    }
                }
                answer = self._post("/auth/tokens", body, headers={})
                if answer.status_code != 201:
                    raise ServiceUnavailable(
                        "herd's Keystone service user could not log in to make a trust: "
                        + _keystone_said(answer)
                    )
                self._trustee = str(answer.json()["token"]["user"]["id"])
            return self._trustee

    def create(self, token: str, user: str, project: str, roles: tuple[str, ...]) -> str:
        """A trust from ``user`` to herd's service user in ``project``; its id.

        Raises:
            Forbidden: Keystone refused (e.g. the caller's token is itself a trust's or an
                application credential's, which may not make trusts).
            ServiceUnavailable: Keystone did not answer.
        """
        body = {
            "trust": {
                "trustor_user_id": user,
                "trustee_user_id": self.trustee_id(),
                "project_id": project,
                "impersonation": True,
                # as Senlin's: Heat makes its own trust from the token herd gets with this
                # one (for its deferred operations), which Keystone allows only from a
                # trust that may be redelegated
                "allow_redelegation": True,
                "roles": [{"name": role} for role in roles],
            }
        }
        answer = self._post("/OS-TRUST/trusts", body, headers={"X-Auth-Token": token})
        if answer.status_code != 201:
            raise Forbidden(
                f"herd could not get a Keystone trust from user {user} in project {project} to "
                f"act for them on Nova: {_keystone_said(answer)}"
            )
        return str(answer.json()["trust"]["id"])

    def exists(self, token: str, trust_id: str) -> bool:
        """Whether Keystone still has the trust (its trustor may read it with ``token``).

        Only Keystone's 404 says no; any other answer keeps the stored trust (the driver
        reports a trust Keystone refuses, naming it).
        """
        try:
            answer = httpx.get(
                f"{self.auth_url}/OS-TRUST/trusts/{trust_id}",
                headers={"X-Auth-Token": token},
                timeout=TIMEOUT,
            )
        except httpx.HTTPError as exc:
            raise ServiceUnavailable(f"Keystone could not be asked for a trust: {exc}") from None
        return answer.status_code != 404

    def _post(
        self, path: str, body: Mapping[str, object], headers: dict[str, str]
    ) -> httpx.Response:
        try:
            return httpx.post(self.auth_url + path, json=body, headers=headers, timeout=TIMEOUT)
        except httpx.HTTPError as exc:
            raise ServiceUnavailable(f"Keystone could not be asked for a trust: {exc}") from None


def ensure_trust(services: Services, ctx: RequestContext, profile_id: str) -> None:
    """Before a cluster or a lone node is stored: the caller's trust, when it will act.

    Nothing happens unless ``nova_trusts`` is on, the caller came with a Keystone token
    and the profile is an ``os.nova.server`` or ``os.heat.stack`` one. A stored trust
    Keystone still has is reused (as Senlin did); one deleted meanwhile is replaced, which
    revives the caller's clusters too (they act through it). A refused one is an error and
    nothing is stored.
    """
    maker: TrustMaker | None = services.extra.get("trusts")
    if maker is None or ctx.keystone is None:
        return
    with services.database.read() as session:
        profile = find_referenced(
            session, ProfileRow, profile_id, ctx.own_scope(), ResourceType.PROFILE
        )
        if services.drivers.get(profile.type).profile_type not in TRUSTED_PROFILE_TYPES:
            return
        stored = credentials.get_trust(session, ctx.user, ctx.project)
    if stored is not None and maker.exists(ctx.keystone.token, stored):
        return
    trust_id = maker.create(ctx.keystone.token, ctx.user, ctx.project, ctx.keystone.roles)
    try:
        with services.database.write() as session:
            credentials.save_trust(session, ctx.user, ctx.project, trust_id, services.now())
    except IntegrityError:
        pass  # a concurrent request stored its trust first: either acts for the caller
