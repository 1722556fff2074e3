"""Checking a profile against the cloud, and turning its names into ids.

At profile create and validate time :meth:`Resolver.check` asks the cloud about
what the spec names (region, zone, flavor, image, key pair, networks) and
refuses, naming the property, what is not there or what this cloud cannot do
(networks without a network service, volumes without a block storage service).
Senlin's texts are kept: ``The specified flavor 'x' could not be found.``

At boot time the same lookups give Nova its ids. They are kept for a minute
per region, so a scale-out of 50 servers asks for the flavor once, not 50 times.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from herd.drivers.nova.cloud import NovaCloud, is_not_found, nova_message
from herd.drivers.nova.sdk import Found, NovaConnection
from herd.drivers.spec_values import fail
from herd.errors import DriverError, InvalidSpec

CACHE_SECONDS = 60.0

T = TypeVar("T")


class Resolver:
    """Name-or-id lookups against the cloud, cached briefly per region."""

    def __init__(self, cloud: NovaCloud, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.cloud = cloud
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[tuple[str | None, str, str], tuple[float, object]] = {}

    def _cached(self, region: str | None, kind: str, key: str, find: Callable[[], T]) -> T:
        now = self._clock()
        with self._lock:
            hit = self._cache.get((region, kind, key))
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            # ``kind`` is in the key, and each kind is always found by the same function
            return cast(T, hit[1])
        value = find()
        if value is not None:  # "not there" is asked again: someone may be making it
            with self._lock:
                self._cache[(region, kind, key)] = (now, value)
        return value

    def _find(
        self, region: str | None, kind: str, name_or_id: str, find: Callable[[str], T | None]
    ) -> T | None:
        def lookup() -> T | None:
            try:
                return self.cloud.call(f"finding {kind} '{name_or_id}'", find, name_or_id)
            except Exception as exc:
                if is_not_found(exc):
                    return None
                raise

        return self._cached(region, kind, name_or_id, lookup)

    # -- the lookups (DriverError when the cloud cannot answer) -------------------------

    def flavor(self, conn: NovaConnection, region: str | None, name_or_id: str) -> Found | None:
        return self._find(
            region, "flavor", name_or_id,
            lambda n: conn.compute.find_flavor(n, ignore_missing=True),
        )  # fmt: skip

    def image(self, conn: NovaConnection, region: str | None, name_or_id: str) -> Found | None:
        return self._find(
            region, "image", name_or_id, lambda n: conn.image.find_image(n, ignore_missing=True)
        )

    def network(self, conn: NovaConnection, region: str | None, name_or_id: str) -> Found | None:
        return self._find(
            region, "network", name_or_id,
            lambda n: conn.network.find_network(n, ignore_missing=True),
        )  # fmt: skip

    def has_service(self, conn: NovaConnection, region: str | None, service: str) -> bool:
        return bool(
            self._cached(region, "service", service, lambda: bool(conn.has_service(service)))
        )

    def zones(self, conn: NovaConnection, region: str | None) -> set[str]:
        def listing() -> set[str]:
            zones = self.cloud.call(
                "listing availability zones", lambda: list(conn.compute.availability_zones())
            )
            return {z.name for z in zones if (z.state or {}).get("available", True)}

        return set(self._cached(region, "zones", "", listing))

    def default_networks(self, conn: NovaConnection, region: str | None) -> str:
        """Nova's ``networks`` when the profile names none: ``auto`` where the cloud has
        networks to give, ``none`` where it has no network service or no network."""

        def decide() -> str:
            if not self.has_service(conn, region, "network"):
                return "none"
            found = self.cloud.call(
                "listing networks", lambda: list(conn.network.networks(limit=1))
            )
            return "auto" if found else "none"

        return str(self._cached(region, "default_networks", "", decide))

    # -- for a boot ----------------------------------------------------------------------

    def boot_ids(
        self, conn: NovaConnection, region: str | None, props: Mapping[str, Any]
    ) -> tuple[str, str | None, str | list[dict[str, str]]]:
        """(flavor id, image id, Nova's networks value) for a boot; DriverError naming
        what is missing (it may have been deleted since the profile was made)."""
        flavor = self.flavor(conn, region, props["flavor"])
        if flavor is None:
            raise DriverError(f"The specified flavor '{props['flavor']}' could not be found.")
        image_id = None
        if props.get("image"):
            image = self.image(conn, region, props["image"])
            if image is None:
                raise DriverError(f"The specified image '{props['image']}' could not be found.")
            image_id = image.id
        return flavor.id, image_id, self.networks(conn, region, props.get("networks") or [])

    def networks(
        self, conn: NovaConnection, region: str | None, networks: list[dict[str, Any]]
    ) -> str | list[dict[str, str]]:
        if not networks:
            return self.default_networks(conn, region)
        result: list[dict[str, str]] = []
        for spec in networks:
            if spec.get("port"):
                result.append({"port": spec["port"]})
                continue
            found = self.network(conn, region, spec["network"])
            if found is None:
                raise DriverError(f"The specified network {spec['network']} could not be found.")
            entry = {"uuid": found.id}
            if spec.get("fixed_ip"):
                entry["fixed_ip"] = spec["fixed_ip"]
            result.append(entry)
        return result

    # -- at profile create / validate ------------------------------------------------------

    def check(self, props: Mapping[str, Any]) -> None:
        """Refuse, naming the property, what the cloud does not have or cannot do.

        Raises:
            InvalidSpec: a property names something missing or unsupported here, or
                the cloud cannot be asked (the reason says why).
        """
        region = (props.get("context") or {}).get("region_name")
        try:
            conn = self.cloud.connection(region)
            self._check(conn, region, props)
        except DriverError as exc:
            raise InvalidSpec(
                f"properties: cannot check the profile against the cloud: {exc}",
                field="properties",
            ) from None

    def _check(self, conn: NovaConnection, region: str | None, props: Mapping[str, Any]) -> None:
        if region:
            try:
                self.cloud.call("finding the compute endpoint", conn.compute.get_endpoint)
            except Exception as exc:
                raise fail(
                    "context.region_name",
                    f"The specified region '{region}' has no compute endpoint: {nova_message(exc)}",
                ) from None
        zone = props.get("availability_zone")
        if zone and zone not in self.zones(conn, region):
            raise fail(
                "availability_zone",
                f"The specified availability_zone '{zone}' could not be found",
            )
        flavor = self.flavor(conn, region, props["flavor"])
        if flavor is None:
            raise fail("flavor", f"The specified flavor '{props['flavor']}' could not be found.")
        if getattr(flavor, "is_disabled", False):
            raise fail("flavor", f"The specified flavor '{props['flavor']}' is disabled")
        if props.get("image") and self.image(conn, region, props["image"]) is None:
            raise fail("image", f"The specified image '{props['image']}' could not be found.")
        self._check_keypair(conn, region, props.get("key_name"))
        self._check_networks(conn, region, props.get("networks") or [])
        for i, device in enumerate(props.get("block_device_mapping_v2") or []):
            needs_volumes = device["destination_type"] == "volume" or device["source_type"] in (
                "volume",
                "snapshot",
            )
            if needs_volumes and not self.has_service(conn, region, "block-storage"):
                raise fail(
                    f"block_device_mapping_v2[{i}]",
                    "this cloud has no block storage service (Cinder): only "
                    "'local' devices from an image or blank can be honoured",
                )

    def _check_keypair(
        self, conn: NovaConnection, region: str | None, key_name: str | None
    ) -> None:
        if not key_name:
            return
        found = self._find(
            region, "keypair", key_name,
            lambda n: conn.compute.find_keypair(n, ignore_missing=True),
        )  # fmt: skip
        if found is None:
            raise fail("key_name", f"The specified key_name '{key_name}' could not be found.")

    def _check_networks(
        self, conn: NovaConnection, region: str | None, networks: list[dict[str, Any]]
    ) -> None:
        if networks and not self.has_service(conn, region, "network"):
            raise fail(
                "networks",
                "this cloud has no network service (Neutron), so no network or port can be "
                "given to a server: leave 'networks' out",
            )
        for i, spec in enumerate(networks):
            if spec.get("network") and self.network(conn, region, spec["network"]) is None:
                raise fail(
                    f"networks[{i}].network",
                    f"The specified network {spec['network']} could not be found.",
                )
            if spec.get("port"):
                port = self._find(
                    region, "port", spec["port"],
                    lambda n: conn.network.find_port(n, ignore_missing=True),
                )  # fmt: skip
                if port is None:
                    raise fail(
                        f"networks[{i}].port",
                        f"The specified port {spec['port']} could not be found.",
                    )
                if getattr(port, "status", "DOWN") != "DOWN":
                    raise fail(
                        f"networks[{i}].port", f"The status of the port {spec['port']} must be DOWN"
                    )
