"""The registry of drivers, keyed by versioned profile type (``herd.process-1.0``).

A registry is an ordinary object owned by whoever builds the application (never
a module global), so tests and several engines in one process each hold their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from herd.drivers.base import Driver
from herd.drivers.heat.driver import HeatStackDriver
from herd.drivers.nova.cloud import NovaOptions
from herd.drivers.nova.driver import NovaServerDriver
from herd.drivers.nova.trusts import TrustedConnections
from herd.drivers.operations import describe_operations
from herd.drivers.process import ProcessDriver
from herd.drivers.sim import SimDriver
from herd.errors import InvalidSpec, NotFound

#: prefixes of Senlin's built-in profile types
SENLIN_TYPE_PREFIXES = ("os.", "container.")


def _normalize_version(version: str | float | int) -> str:
    text = str(version).strip()
    # YAML reads ``version: 1`` as an integer; Senlin's types are always major.minor.
    return f"{text}.0" if text.isdigit() else text


class DriverRegistry:
    """Drivers by full profile type name (``<type>-<version>``)."""

    def __init__(self) -> None:
        """Create an empty registry."""
        self._drivers: dict[str, Driver] = {}

    def register(self, driver: Driver) -> None:
        """Register ``driver`` under every version it declares.

        Raises:
            ValueError: a driver is already registered under one of those names.
        """
        names = [f"{driver.profile_type}-{version}" for version in driver.versions]
        taken = [name for name in names if name in self._drivers]
        if taken:
            raise ValueError(f"profile type {', '.join(taken)} is already registered")
        for name in names:
            self._drivers[name] = driver

    def full_name(self, profile_type: str, version: str | float | int | None = None) -> str:
        """The registered ``<type>-<version>`` name for a type, or raise InvalidSpec.

        ``profile_type`` is either a full name (``herd.process-1.0``) or a bare
        type with ``version`` given separately; a bare type without a version
        means its newest version.
        """
        if version is not None:
            name = f"{profile_type}-{_normalize_version(version)}"
        elif profile_type in self._drivers:
            name = profile_type
        else:
            versions = sorted(
                (key for key in self._drivers if key.rpartition("-")[0] == profile_type),
                key=lambda key: tuple(int(p) for p in key.rpartition("-")[2].split(".")),
            )
            name = versions[-1] if versions else profile_type
        if name not in self._drivers:
            supported = ", ".join(sorted(self._drivers)) or "none"
            if name.startswith(SENLIN_TYPE_PREFIXES):
                # Senlin's other types (container.dockerinc.docker...) drive services that
                # herd does not talk to.
                raise InvalidSpec(
                    f"The specified profile type ({name}) is not supported. It is one of "
                    "Senlin's OpenStack profile types, which herd does not provide: herd runs "
                    "nodes as local processes, simulated servers, Nova servers or Heat "
                    f"stacks. Supported types: {supported}.",
                    field="type",
                )
            base = name.rpartition("-")[0] or name
            if not any(key.rpartition("-")[0] == base for key in self._drivers):
                # a type nobody provides: Senlin's 404 and text (ResourceNotFound)
                raise NotFound("profile_type", name)
            raise InvalidSpec(
                f"The specified profile type ({name}) is not supported. "
                f"Supported types: {supported}.",
                field="type",
            )
        return name

    def get(self, profile_type: str, version: str | float | int | None = None) -> Driver:
        """The driver for a profile type, or raise InvalidSpec naming the supported ones."""
        return self._drivers[self.full_name(profile_type, version)]

    def validate(
        self,
        profile_type: str,
        version: str | float | int | None,
        properties: Mapping[str, object],
    ) -> dict[str, object]:
        """Validate a profile's properties against its type; return them with defaults."""
        return self.get(profile_type, version).validate_properties(properties)

    def validate_for_create(
        self,
        profile_type: str,
        version: str | float | int | None,
        properties: Mapping[str, object],
    ) -> dict[str, object]:
        """:meth:`validate`, then the driver's check against its backend (a profile's
        create and validate: e.g. does the flavor exist on the cloud)."""
        driver = self.get(profile_type, version)
        validated = driver.validate_properties(properties)
        driver.check_against_backend(validated)
        return validated

    def names(self) -> list[str]:
        """Every registered full type name, sorted."""
        return sorted(self._drivers)

    def __contains__(self, name: object) -> bool:
        return name in self._drivers

    def describe(self, name: str) -> dict[str, object]:
        """One profile type as ``GET /v1/profile-types/<name>`` shows it; NotFound otherwise."""
        driver = self._drivers.get(name)
        if driver is None:
            raise NotFound("profile_type", name)
        version = name.rpartition("-")[2]
        schema: Mapping[str, Mapping[str, object]] = getattr(driver, "properties_schema", {})
        status: Mapping[str, list[dict[str, str]]] = getattr(driver, "support_status", {})
        return {
            "name": name,
            "version": version,
            "schema": {key: _schema_entry(entry) for key, entry in schema.items()},
            "support_status": {
                version: list(status.get(version, [{"status": "SUPPORTED", "since": "2025.01"}]))
            },
            "operations": describe_operations(getattr(driver, "operations_schema", {})),
        }

    def types(self) -> list[dict[str, object]]:
        """Every profile type with its schema and support status, sorted by name."""
        return [self.describe(name) for name in self.names()]

    def close(self) -> None:
        """Close every driver (their resources stay)."""
        for driver in {id(driver): driver for driver in self._drivers.values()}.values():
            driver.close()


def _schema_entry(entry: Mapping[str, object]) -> dict[str, object]:
    # Senlin shows every property with these fields, whether or not they were set.
    result: dict[str, object] = {"required": False, "updatable": False, **entry}
    return result


def default_driver_registry(
    data_dir: Path,
    *,
    sim_state_file: Path | None = None,
    nova: NovaOptions | None = None,
    nova_trusts: TrustedConnections | None = None,
    heat_cloud: str | None = None,
) -> DriverRegistry:
    """A registry holding herd's built-in drivers: ``herd.process-1.0``, ``herd.sim-1.0``
    ``os.nova.server`` (1.0 to 1.2) and ``os.heat.stack-1.0``.

    ``sim_state_file`` shares the sim driver's servers with other processes (see
    :mod:`herd.drivers.sim_state`); without it they live in this process's memory.
    ``nova`` names the cloud of ``os.nova.server`` (default: the ``OS_*`` variables;
    nothing is contacted until a Nova profile is used); ``nova_trusts`` makes it act for
    each node's owner through a Keystone trust instead (:mod:`herd.drivers.nova.trusts`).
    ``os.heat.stack`` uses the same options and trusts, with ``heat_cloud`` for its cloud
    when given (default: Nova's).
    """
    registry = DriverRegistry()
    registry.register(ProcessDriver(data_dir))
    registry.register(SimDriver(state_file=sim_state_file))
    nova = nova or NovaOptions.for_data_dir(data_dir)
    registry.register(NovaServerDriver(nova, trusts=nova_trusts))
    heat = dataclasses.replace(nova, cloud=heat_cloud) if heat_cloud else nova
    registry.register(HeatStackDriver(heat, trusts=nova_trusts))
    return registry
