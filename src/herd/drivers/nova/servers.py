"""Nova server calls the driver is built from: boot arguments, waiting, deleting, details.

:func:`boot_arguments` is pure (the profile and node in, openstacksdk's
``create_server`` keywords out). The rest poll one server through
:meth:`NovaCloud.call`, so each poll holds a slot of the cloud's limit only for
its request.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from herd.drivers.base import NodeRequest
from herd.drivers.nova.cloud import NovaCloud, is_not_found, node_tag
from herd.drivers.nova.polling import Backoff, poll_until
from herd.drivers.nova.sdk import NovaConnection
from herd.errors import DriverError

#: statuses a server settles in; any other means Nova is still working on it
SETTLED = frozenset(
    {"ACTIVE", "SHUTOFF", "PAUSED", "SUSPENDED", "RESCUE", "VERIFY_RESIZE", "ERROR", "SHELVED"}
)

#: statuses NODE_STATUS_POLLING counts as a failed server (Senlin's list)
UNHEALTHY = frozenset({"ERROR", "SHUTOFF", "DELETED", "SOFT_DELETED"})

#: the pause between two reads of a server: short at first (most changes are quick), then
#: longer, so a slow boot costs few requests
POLLS = Backoff(0.1, factor=1.5, most=2.0)

#: metadata herd writes on every server, as Senlin did (cluster_node_id finds the node)
HERD_METADATA_KEYS = ("cluster_id", "cluster_node_id", "cluster_node_index")


class ServerFailed(DriverError):
    """Nova put the server in ERROR; the message is Nova's fault text."""


def server_metadata(request: NodeRequest, user_metadata: Mapping[str, str]) -> dict[str, str]:
    """The profile's metadata plus the node's identity, under Senlin's keys."""
    metadata = dict(user_metadata)
    metadata["cluster_node_id"] = request.node_id
    if request.cluster_id:
        metadata["cluster_id"] = request.cluster_id
        metadata["cluster_node_index"] = str(request.index)
    return metadata


def server_name(request: NodeRequest) -> str:
    return str(request.properties.get("name") or request.name)


def boot_arguments(
    request: NodeRequest,
    *,
    flavor_id: str,
    image_id: str | None,
    owner_tag: str,
    networks: str | list[dict[str, str]],
) -> dict[str, object]:
    """openstacksdk ``create_server`` keywords for a node (no cloud call).

    ``networks`` is Nova's value: a list of ``{"uuid"|"port", "fixed_ip"}`` or
    ``"auto"``/``"none"``. The zone comes from the placement (a zone placement
    policy) before the profile's ``availability_zone``, as Senlin did.
    """
    props = request.properties
    kwargs: dict[str, object] = {
        "name": server_name(request),
        "flavor_id": flavor_id,
        "metadata": server_metadata(request, props.get("metadata") or {}),
        "tags": [owner_tag, node_tag(request.node_id)],
        "networks": networks,
        "disk_config": "AUTO" if props.get("auto_disk_config", True) else "MANUAL",
    }
    if image_id:
        kwargs["image_id"] = image_id
    zone = request.placement.get("zone") or props.get("availability_zone")
    if zone:
        kwargs["availability_zone"] = zone
    if props.get("key_name"):
        kwargs["key_name"] = props["key_name"]
    if props.get("admin_pass"):
        kwargs["admin_password"] = props["admin_pass"]
    if props.get("config_drive") is not None:
        kwargs["config_drive"] = props["config_drive"]
    if props.get("user_data") is not None:
        kwargs["user_data"] = base64.b64encode(str(props["user_data"]).encode()).decode()
    if props.get("security_groups"):
        kwargs["security_groups"] = [{"name": group} for group in props["security_groups"]]
    hints = dict(props.get("scheduler_hints") or {})
    group = request.placement.get("servergroup")
    if group:
        hints["group"] = group
    if hints:
        kwargs["scheduler_hints"] = hints
    if props.get("block_device_mapping_v2"):
        kwargs["block_device_mapping"] = [dict(d) for d in props["block_device_mapping_v2"]]
    return kwargs


class NovaServer(Protocol):
    """What herd reads of an openstacksdk ``Server`` (the SDK ships no types); the
    optional fields (``fault``, ``flavor``, ``image``, ``addresses``...) are read with
    ``getattr`` because Nova shows them by microversion and role."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def task_state(self) -> str | None: ...

    @property
    def availability_zone(self) -> str | None: ...

    @property
    def key_name(self) -> str | None: ...

    @property
    def metadata(self) -> Mapping[str, str] | None: ...

    @property
    def tags(self) -> list[str] | None: ...


def fault_text(server: NovaServer) -> str:
    """Nova's fault message of a server in ERROR (``No valid host was found...``)."""
    fault = getattr(server, "fault", None) or {}
    message = fault.get("message") if isinstance(fault, Mapping) else None
    return str(message or f"server {server.id} is in ERROR without a fault message")


def _fault_of_error(
    cloud: NovaCloud, conn: NovaConnection, server: NovaServer, tries: int = 10
) -> str:
    """The fault of a server just put in ERROR. Nova's conductor saves the ERROR state a
    moment before the fault record, so a server read in between has none yet."""
    for _ in range(tries):
        if getattr(server, "fault", None):
            break
        cloud.pause(0.2)
        server = get_server(cloud, conn, server.id) or server
    return fault_text(server)


def get_server(cloud: NovaCloud, conn: NovaConnection, server_id: str) -> NovaServer | None:
    """The server, or None when Nova says it does not exist."""
    try:
        server: NovaServer = cloud.call("reading the server", conn.compute.get_server, server_id)
    except Exception as exc:
        if is_not_found(exc):
            return None
        raise
    return server


def wait_for(
    cloud: NovaCloud,
    conn: NovaConnection,
    server_id: str,
    statuses: Collection[str],
    timeout: float,
    doing: str,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> NovaServer:
    """Poll until the server is in one of ``statuses`` with no task running.

    Raises:
        ServerFailed: the server went to ERROR (with Nova's fault message).
        DriverError: it vanished, or did not get there within ``timeout`` seconds.
    """

    def read() -> NovaServer:
        server = get_server(cloud, conn, server_id)
        if server is None:
            raise DriverError(f"server {server_id} disappeared while {doing}")
        return server

    def arrived(server: NovaServer) -> bool:
        if server.status in statuses and not server.task_state:
            return True
        if server.status == "ERROR" and "ERROR" not in statuses:
            raise ServerFailed(_fault_of_error(cloud, conn, server))
        return False

    return poll_until(
        read,
        arrived,
        timeout,
        lambda server: DriverError(
            f"server {server_id} did not get to {'/'.join(sorted(statuses))} within "
            f"{timeout:g}s while {doing} (it is {server.status})"
        ),
        pause=cloud.pause,
        backoff=POLLS,
        clock=clock,
    )


def delete_and_wait(
    cloud: NovaCloud,
    conn: NovaConnection,
    server_id: str,
    timeout: float,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Delete the server and wait until Nova no longer has it; a 404 is success."""
    try:
        cloud.call("deleting the server", conn.compute.delete_server, server_id)
    except Exception as exc:
        if is_not_found(exc):
            return
        raise

    def status() -> str | None:
        server = get_server(cloud, conn, server_id)
        return None if server is None else server.status

    poll_until(
        status,
        lambda now: now is None or now in ("DELETED", "SOFT_DELETED"),
        timeout,
        lambda now: DriverError(
            f"server {server_id} was still there {timeout:g}s after its deletion (it is {now})"
        ),
        pause=cloud.pause,
        backoff=POLLS,
        clock=clock,
    )


def find_by_tag(cloud: NovaCloud, conn: NovaConnection, tag: str) -> list[NovaServer]:
    """Servers carrying ``tag`` (Nova filters tags itself)."""
    return list(cloud.call("listing servers", lambda: list(conn.compute.servers(tags=tag))))


def node_data(server: NovaServer, region: str | None) -> dict[str, object]:
    """What a node keeps about its server (its details, as Senlin showed them).

    ``placement.zone`` is the zone Nova reports, which the deletion policy's zone
    split counts by. The admin password Nova returns at boot is never kept.
    """
    zone = getattr(server, "availability_zone", None)
    data: dict[str, object] = {
        "placement": {"zone": zone, "region_name": region},
        "server_id": server.id,
        "name": server.name,
        "status": server.status,
        "availability_zone": zone,
        "addresses": dict(getattr(server, "addresses", None) or {}),
        "flavor": _flavor_name(server),
        "image": _image_id(server),
    }
    host = getattr(server, "compute_host", None)
    if host:  # visible to administrators only
        data["host"] = host
    hypervisor = getattr(server, "hypervisor_hostname", None)
    if hypervisor:
        data["hypervisor_hostname"] = hypervisor
    return data


def _flavor_name(server: NovaServer) -> str | None:
    flavor = getattr(server, "flavor", None)
    if flavor is None:
        return None
    for key in ("original_name", "name", "id"):
        value = getattr(flavor, key, None) if not isinstance(flavor, Mapping) else flavor.get(key)
        if value:
            return str(value)
    return None


def _image_id(server: NovaServer) -> str | None:
    image = getattr(server, "image", None)
    if image is None:
        return None
    value = image.get("id") if isinstance(image, Mapping) else getattr(image, "id", None)
    return str(value) if value else None
