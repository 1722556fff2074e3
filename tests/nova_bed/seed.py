"""What the bed holds once up: two availability zones, flavors, images (through the real APIs).

Names: the flavors ``m1.tiny`` (id ``1``, what senlin-tempest-plugin's spec names as flavor
``1``), ``m1.small`` (id ``2``), ``new_flavor`` (the flavor senlin-tempest-plugin updates
profiles to) and ``m1.toobig`` (more RAM than any fake hypervisor has: "No valid host was
found"); the images ``cirros-0.6.2-x86_64-disk`` and ``cirros-0.4.0-x86_64-disk`` (the name in
senlin-tempest-plugin's server spec) and ``new_image`` (the image its profile update tests
switch to), each a few bytes: the fake virt driver never reads them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from tests.nova_bed.processes import BedError, Service

ADMIN = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.90"}
# id, name, ram MB, vcpus, disk GB. The fake driver's hosts have 800,000 MB of RAM each.
FLAVORS = (
    ("1", "m1.tiny", 512, 1, 1),
    ("2", "m1.small", 2048, 1, 20),
    ("3", "new_flavor", 1024, 1, 1),
    ("99", "m1.toobig", 1_000_000, 1, 1),
)
IMAGES = ("cirros-0.6.2-x86_64-disk", "cirros-0.4.0-x86_64-disk", "new_image")
TOO_BIG = "m1.toobig"


class Seeder:
    def __init__(
        self, compute: str, glance: str, placement: str, services: Sequence[Service]
    ) -> None:
        self.compute = httpx.Client(base_url=compute, headers=ADMIN, timeout=60)
        self.glance = httpx.Client(base_url=glance, headers={"X-Auth-Token": "admin"}, timeout=60)
        self.placement = httpx.Client(
            base_url=placement,
            headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "placement latest"},
            timeout=60,
        )
        self.services = services

    def _check(self, response: httpx.Response, what: str) -> dict[str, Any]:
        if response.status_code >= 400:
            raise BedError(f"{what}: {response.status_code} {response.text[:500]}")
        return response.json() if response.content else {}

    def _alive(self) -> None:
        for service in self.services:
            if not service.alive():
                raise service.failure("exited")

    def wait_for_computes(self, hosts: list[str], timeout: float = 240.0) -> None:
        """Both compute services up and both resource providers in Placement."""
        end = time.monotonic() + timeout
        while True:
            self._alive()
            services = self._check(
                self.compute.get("/os-services", params={"binary": "nova-compute"}), "os-services"
            )["services"]
            up = {s["host"] for s in services if s["state"] == "up"}
            providers = self._check(self.placement.get("/resource_providers"), "placement")
            names = {p["name"] for p in providers["resource_providers"]}
            if set(hosts) <= up and set(hosts) <= names:
                return
            if time.monotonic() > end:
                raise BedError(
                    f"compute hosts {hosts} not up within {timeout:.0f} s "
                    f"(up: {sorted(up)}, resource providers: {sorted(names)})"
                )
            time.sleep(0.5)

    def zones(self, hosts: Mapping[str, str]) -> dict[str, str]:
        """One host aggregate per host, each its own availability zone: {host: zone}."""
        for host, zone in hosts.items():
            body = {"aggregate": {"name": f"agg-{zone}", "availability_zone": zone}}
            agg = self._check(self.compute.post("/os-aggregates", json=body), "aggregate")
            agg_id = agg["aggregate"]["id"]
            self._check(
                self.compute.post(
                    f"/os-aggregates/{agg_id}/action", json={"add_host": {"host": host}}
                ),
                f"add {host} to aggregate {zone}",
            )
        return dict(hosts)

    def flavors(self) -> dict[str, str]:
        made = {}
        for flavor_id, name, ram, vcpus, disk in FLAVORS:
            body = {
                "flavor": {"id": flavor_id, "name": name, "ram": ram, "vcpus": vcpus, "disk": disk}
            }
            self._check(self.compute.post("/flavors", json=body), f"flavor {name}")
            made[name] = flavor_id
        return made

    def images(self) -> dict[str, str]:
        made = {}
        for name in IMAGES:
            body = {
                "name": name,
                "disk_format": "raw",
                "container_format": "bare",
                "visibility": "public",
            }
            image = self._check(self.glance.post("/v2/images", json=body), f"image {name}")
            upload = self.glance.put(
                f"/v2/images/{image['id']}/file",
                content=b"herd nova bed image\n" * 64,
                headers={"Content-Type": "application/octet-stream"},
            )
            self._check(upload, f"upload of image {name}")
            made[name] = image["id"]
        return made
