"""The Nova bed itself (issue 23): real servers in two real zones, real errors, real
notifications. If these fail, the Nova driver's tests cannot be believed either.

The bed is shared by the whole run (``nova_cloud``), so each test names its servers with its
own prefix and counts only those.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from tests.nova_bed.fixture import NovaCloud
from tests.nova_bed.notifications import NotificationListener, payload
from tests.waiting import wait_for

# the first Nova test of a run may wait for the bed's whole start-up (a minute or two)
pytestmark = [pytest.mark.e2e, pytest.mark.nova, pytest.mark.slow, pytest.mark.timeout(900)]


def _boot(conn: Any, cloud: NovaCloud, name: str, *, flavor: str, zone: str | None = None) -> Any:
    image = conn.image.find_image(cloud.image, ignore_missing=False)
    found = conn.compute.find_flavor(flavor, ignore_missing=False)
    extra = {"availability_zone": zone} if zone else {}
    return conn.compute.create_server(
        name=name, image_id=image.id, flavor_id=found.id, networks="none", **extra
    )


def _ours(conn: Any, prefix: str) -> list[Any]:
    return [s for s in conn.compute.servers(name=f"^{prefix}") if s.name.startswith(prefix)]


def test_servers_boot_into_each_zone_and_a_flavor_too_big_fails(nova_cloud: NovaCloud) -> None:
    conn = nova_cloud.connect()
    prefix = f"bed-{uuid.uuid4().hex[:8]}-"
    zones = sorted(set(nova_cloud.info.availability_zones.values()))
    assert zones == ["az1", "az2"]

    booted = [
        _boot(conn, nova_cloud, f"{prefix}{zone}", flavor=nova_cloud.flavor, zone=zone)
        for zone in zones
    ]
    too_big = _boot(conn, nova_cloud, f"{prefix}big", flavor=nova_cloud.too_big_flavor)

    for server, zone in zip(booted, zones, strict=True):
        active = conn.compute.wait_for_server(server, status="ACTIVE", interval=0.3, wait=180)
        assert active.availability_zone == zone
        # the zone's only host is the one its aggregate holds
        host = active.hypervisor_hostname
        assert nova_cloud.info.availability_zones[host] == zone

    failed = conn.compute.wait_for_server(
        too_big, status="ERROR", failures=["ACTIVE"], interval=0.3, wait=180
    )
    fault = conn.compute.get_server(failed.id).fault or {}
    assert "No valid host" in fault.get("message", ""), fault

    for server in _ours(conn, prefix):
        conn.compute.delete_server(server)
    wait_for(lambda: not _ours(conn, prefix), timeout=180, interval=0.5)


def test_a_deleted_server_is_announced_by_a_versioned_notification(
    nova_cloud: NovaCloud,
) -> None:
    conn = nova_cloud.connect()
    name = f"bed-{uuid.uuid4().hex[:8]}-notified"
    with NotificationListener(
        nova_cloud.info.transport_url,
        nova_cloud.info.notification_exchange,
        nova_cloud.info.notification_topic,
    ) as listener:
        server = _boot(conn, nova_cloud, name, flavor=nova_cloud.flavor, zone="az2")
        conn.compute.wait_for_server(server, status="ACTIVE", interval=0.3, wait=180)
        conn.compute.delete_server(server)
        ended = listener.wait_for(
            "instance.delete.end", lambda n: payload(n).get("uuid") == server.id, timeout=180
        )
    data = payload(ended)
    assert data["display_name"] == name
    assert data["availability_zone"] == "az2"
    assert data["state"] == "deleted"
    assert ended["publisher_id"] == "nova-compute:compute2"
