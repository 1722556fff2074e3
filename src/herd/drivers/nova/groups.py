"""Nova server groups, for the affinity policy: find by name or id, create, delete.

A group lives in one region: the one the cluster's profile names
(``context.region_name``), else the cloud's default, as for the profile's servers.
"""

from __future__ import annotations

from typing import Protocol

from herd.drivers.base import ServerGroup
from herd.drivers.nova.cloud import NovaCloud, is_not_found
from herd.drivers.nova.sdk import NovaConnection


class NovaServerGroup(Protocol):
    """What herd reads of openstacksdk's ``ServerGroup`` (``policy``/``policies`` by
    microversion, read with ``getattr``)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str | None: ...


def group_of(found: NovaServerGroup) -> ServerGroup:
    """herd's view of openstacksdk's ServerGroup (``policy`` from API 2.64, else the
    first of ``policies``)."""
    policies = list(getattr(found, "policies", None) or [])
    policy = getattr(found, "policy", None) or (policies[0] if policies else "")
    return ServerGroup(id=str(found.id), name=str(found.name or ""), policy=str(policy or ""))


def find_group(cloud: NovaCloud, conn: NovaConnection, name_or_id: str) -> ServerGroup | None:
    """The project's group with this id or name, or None."""
    found = cloud.call(
        "looking for the server group",
        conn.compute.find_server_group,
        name_or_id,
        ignore_missing=True,
    )
    return group_of(found) if found is not None else None


def create_group(cloud: NovaCloud, conn: NovaConnection, name: str, policy: str) -> ServerGroup:
    """Make the group (sent once: a retried create could make two)."""
    made = cloud.call_once(
        "creating the server group", conn.compute.create_server_group, name=name, policy=policy
    )
    return group_of(made)


def delete_group(cloud: NovaCloud, conn: NovaConnection, group_id: str) -> None:
    """Delete the group; a 404 is success. Nova lets a group with members go: the
    servers stay, out of any group."""
    try:
        cloud.call(
            "deleting the server group",
            conn.compute.delete_server_group,
            group_id,
            ignore_missing=False,
        )
    except Exception as exc:
        if not is_not_found(exc):
            raise
