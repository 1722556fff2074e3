"""herd's overhead over openstacksdk on a real Nova, and how fast it notices a deleted server.

In one run, against the Nova bed (``make nova-bed``; a bed already up is used when
``HERD_TEST_NOVA_BED_ROOT`` names it): ``--servers`` servers booted and deleted directly
through openstacksdk (``HERD_NOVA_MAX_CONCURRENT_CALLS`` threads, as many as herd may use),
then the same count through ``herd serve`` (a cluster scale-out, then its delete). The
ratio is herd's time over the direct one (issue 23's goal: within 1.2x). Then a cluster of
3 with a LIFECYCLE_EVENTS health policy: the time from a server's deletion in Nova to herd
recording it, and to the node ACTIVE again on a new server.

Run: ``.venv/bin/python bench/nova.py [--servers 50]`` (``--count`` is the same option).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*
import httpx
from tests.e2e.server import HerdServer
from tests.nova_bed import control
from tests.nova_bed.fixture import NovaCloud
from tests.postgres import free_port
from tests.waiting import wait_for, wait_for_action

from common import table

V = {"OpenStack-API-Version": "clustering 1.14"}
THREADS = 10  # herd's default HERD_NOVA_MAX_CONCURRENT_CALLS


def patient(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Send again a request whose connection was reset (the bed's nova-api resets some under
    load); herd's driver does the same for every request but a create."""
    from keystoneauth1.exceptions.connection import ConnectFailure

    for attempt in range(5):
        try:
            return call(*args, **kwargs)
        except ConnectFailure:
            if attempt == 4:
                raise
            time.sleep(0.5)


def direct(cloud: NovaCloud, count: int) -> tuple[float, float]:
    """(boot all to ACTIVE, delete all until gone) seconds, through openstacksdk."""
    conn = cloud.connect()
    image = conn.image.find_image(cloud.image, ignore_missing=False)
    flavor = conn.compute.find_flavor(cloud.flavor, ignore_missing=False)

    def boot(i: int) -> Any:
        server = conn.compute.create_server(
            name=f"bench-direct-{i}", image_id=image.id, flavor_id=flavor.id, networks="none"
        )
        return patient(conn.compute.wait_for_server, server, interval=0.5, wait=600)

    def delete(server: Any) -> None:
        patient(conn.compute.delete_server, server)
        patient(conn.compute.wait_for_delete, server, interval=0.5, wait=600)

    with ThreadPoolExecutor(THREADS) as pool:
        started = time.monotonic()
        servers = list(pool.map(boot, range(count)))
        booted = time.monotonic() - started
        started = time.monotonic()
        list(pool.map(delete, servers))
        return booted, time.monotonic() - started


def through_herd(client: httpx.Client, cloud: NovaCloud, count: int) -> tuple[float, float]:
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": cloud.flavor, "image": cloud.image},
    }
    r = client.post("/v1/profiles", json={"profile": {"name": "bench", "spec": spec}})
    profile = r.json()["profile"]["id"]
    body = {"cluster": {"name": "bench", "profile_id": profile, "desired_capacity": 0}}
    r = client.post("/v1/clusters", json=body)
    cluster = r.json()["cluster"]["id"]
    wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1], timeout=120)
    started = time.monotonic()
    r = client.post(f"/v1/clusters/{cluster}/actions", json={"scale_out": {"count": count}})
    action = wait_for_action(client, r.json()["action"], timeout=900)
    booted = time.monotonic() - started
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    started = time.monotonic()
    client.delete(f"/v1/clusters/{cluster}")
    wait_for(lambda: client.get(f"/v1/clusters/{cluster}").status_code == 404, 900, 0.05)
    return booted, time.monotonic() - started


def noticing(client: httpx.Client, cloud: NovaCloud) -> tuple[float, float]:
    """(Nova delete -> herd's HEALTH_CHECK event, -> node ACTIVE on a new server) seconds."""
    conn = cloud.connect()
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": cloud.flavor, "image": cloud.image},
    }
    r = client.post("/v1/profiles", json={"profile": {"name": "watched", "spec": spec}})
    body = {"cluster": {"name": "watched", "profile_id": r.json()["profile"]["id"]}}
    body["cluster"]["desired_capacity"] = 3
    r = client.post("/v1/clusters", json=body)
    cluster = r.json()["cluster"]["id"]
    wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1], timeout=300)
    policy = {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {"detection_modes": [{"type": "LIFECYCLE_EVENTS"}], "interval": 600},
            "recovery": {"actions": [{"name": "RECREATE"}]},
        },
    }
    r = client.post("/v1/policies", json={"policy": {"name": "hp", "spec": policy}})
    r = client.post(
        f"/v1/clusters/{cluster}/actions",
        json={"policy_attach": {"policy_id": r.json()["policy"]["id"]}},
    )
    wait_for_action(client, r.json()["action"], timeout=60)
    wait_for(
        lambda: client.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]["lease"],
        60,
    )
    time.sleep(2)  # members are watched within a second of the lease
    node = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"][0]
    started = time.monotonic()
    conn.compute.delete_server(node["physical_id"])

    def event() -> bool:
        events = client.get("/v1/events", params={"oid": node["id"], "limit": 100}).json()
        return any(e["action"] == "HEALTH_CHECK" for e in events["events"])

    wait_for(event, 120, 0.02)
    noticed = time.monotonic() - started

    def replaced() -> bool:
        now = client.get(f"/v1/nodes/{node['id']}").json()["node"]
        return bool(now["status"] == "ACTIVE" and now["physical_id"] != node["physical_id"])

    wait_for(replaced, 300, 0.05)
    return noticed, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--servers",
        "--count",
        dest="count",
        type=int,
        default=50,
        help="servers booted and deleted each way (issue 23's size: 50; 20 is quicker)",
    )
    args = parser.parse_args()
    given = os.environ.get("HERD_TEST_NOVA_BED_ROOT")
    root = Path(given) if given else Path(tempfile.mkdtemp(prefix="herd-nova-bench-"))
    cloud = NovaCloud(control.ensure(root, watch_pid=None if given else os.getpid()))
    server = HerdServer(
        Path(tempfile.mkdtemp(prefix="herd-nova-bench-data-")) / "data",
        free_port(),
        OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
        HERD_NOVA_CLOUD=cloud.cloud_name,
        HERD_NOVA_NOTIFICATIONS_URL=cloud.info.transport_url,
    ).start()
    try:
        with httpx.Client(base_url=server.url, headers=V, timeout=60) as client:
            direct_boot, direct_delete = direct(cloud, args.count)
            herd_boot, herd_delete = through_herd(client, cloud, args.count)
            noticed, replaced = noticing(client, cloud)
    finally:
        server.stop()
        if not given:
            control.stop(root)
    table(
        f"{args.count} servers, {THREADS} at a time (seconds)",
        ["step", "openstacksdk", "herd", "herd / direct"],
        [
            ["boot to ACTIVE", direct_boot, herd_boot, f"{herd_boot / direct_boot:.2f}x"],
            [
                "delete until gone",
                direct_delete,
                herd_delete,
                f"{herd_delete / direct_delete:.2f}x",
            ],
            [
                "both",
                direct_boot + direct_delete,
                herd_boot + herd_delete,
                f"{(herd_boot + herd_delete) / (direct_boot + direct_delete):.2f}x",
            ],
        ],
    )
    table(
        "a server deleted in Nova (LIFECYCLE_EVENTS)",
        ["to", "seconds"],
        [
            ["herd's HEALTH_CHECK event", f"{noticed:.2f}"],
            ["node ACTIVE on a new server", f"{replaced:.2f}"],
        ],
    )


if __name__ == "__main__":
    main()
