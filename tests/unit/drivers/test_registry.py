"""The driver registry: lookup by versioned type, errors and the profile-types view."""

from __future__ import annotations

from pathlib import Path

import pytest

from herd.drivers.process import ProcessDriver
from herd.drivers.registry import DriverRegistry, default_driver_registry
from herd.drivers.sim import SimDriver
from herd.errors import InvalidSpec, NotFound
from herd.json_types import dig, object_at


@pytest.fixture
def registry(tmp_path: Path) -> DriverRegistry:
    return default_driver_registry(tmp_path)


def test_lookup_by_full_name_and_by_type_with_version(registry: DriverRegistry) -> None:
    process = registry.get("herd.process-1.0")
    assert isinstance(process, ProcessDriver)
    assert registry.get("herd.process", "1.0") is process
    assert registry.get("herd.process", 1.0) is process
    assert registry.get("herd.process", 1) is process
    assert registry.get("herd.process") is process  # newest version
    assert isinstance(registry.get("herd.sim-1.0"), SimDriver)
    assert registry.names() == [
        "herd.process-1.0",
        "herd.sim-1.0",
        "os.heat.stack-1.0",
        "os.nova.server-1.0",
        "os.nova.server-1.1",
        "os.nova.server-1.2",
    ]
    assert "herd.sim-1.0" in registry and "container.dockerinc.docker-1.0" not in registry
    nova = registry.get("os.nova.server")  # newest version
    assert registry.get("os.nova.server", 1) is nova and registry.get("os.nova.server-1.1") is nova


@pytest.mark.parametrize(
    ("type_name", "version", "shown"),
    [
        ("container.dockerinc.docker-1.0", None, "container.dockerinc.docker-1.0"),
        ("os.nova.server", "2.0", "os.nova.server-2.0"),
        ("herd.process", "2.0", "herd.process-2.0"),
    ],
)
def test_unknown_type_names_the_supported_ones(
    registry: DriverRegistry, type_name: str, version: str | None, shown: str
) -> None:
    with pytest.raises(InvalidSpec) as caught:
        registry.get(type_name, version)
    assert caught.value.field == "type"
    assert caught.value.message.startswith(
        f"The specified profile type ({shown}) is not supported."
    )
    assert (
        "herd.process-1.0, herd.sim-1.0, os.heat.stack-1.0, os.nova.server-1.0"
        in caught.value.message
    )


def test_a_type_nobody_provides_is_not_found(registry: DriverRegistry) -> None:
    """Senlin's ResourceNotFound (404) and text, which senlin-tempest-plugin checks."""
    with pytest.raises(NotFound) as caught:
        registry.get("nothing", "1.0")
    assert caught.value.message == "The profile_type 'nothing-1.0' could not be found."


def test_registering_twice_is_refused(registry: DriverRegistry) -> None:
    with pytest.raises(ValueError, match=r"herd\.sim-1\.0 is already registered"):
        registry.register(SimDriver())


def test_registries_are_independent(tmp_path: Path) -> None:
    empty = DriverRegistry()
    assert empty.names() == [] and empty.types() == []
    empty.register(SimDriver())
    assert default_driver_registry(tmp_path).get("herd.sim-1.0") is not empty.get("herd.sim")


def test_types_as_the_profile_types_api_shows_them(registry: DriverRegistry) -> None:
    types = registry.types()
    assert [entry["name"] for entry in types][:2] == ["herd.process-1.0", "herd.sim-1.0"]
    nova = registry.describe("os.nova.server-1.0")
    assert dig(nova, "schema", "flavor", "required") is True
    assert nova["support_status"] == {"1.0": [{"status": "SUPPORTED", "since": "2016.04"}]}
    assert "evacuate" in object_at(nova, "operations")
    process = types[0]
    assert process["version"] == "1.0"
    assert process["support_status"] == {"1.0": [{"status": "SUPPORTED", "since": "2025.01"}]}
    command = object_at(object_at(process, "schema"), "command")
    assert command["type"] == "String" and command["required"] is True
    assert command["updatable"] is False and command["description"]
    assert set(object_at(process, "schema")) == set(ProcessDriver.properties_schema)
    assert set(object_at(types[1], "schema")) == set(SimDriver.properties_schema)
    assert registry.describe("herd.sim-1.0") == types[1]
    with pytest.raises(NotFound):
        registry.describe("herd.sim")


def test_validate_through_the_registry(registry: DriverRegistry) -> None:
    props = registry.validate("herd.process", "1.0", {"command": "srv"})
    assert props["stop_signal"] == "SIGTERM"
    with pytest.raises(InvalidSpec) as caught:
        registry.validate("herd.sim-1.0", None, {"failure_rate": 2})
    assert caught.value.field == "properties.failure_rate"
