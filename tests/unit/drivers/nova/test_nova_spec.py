"""``os.nova.server`` properties: every key of Senlin's spec, good and bad (no cloud)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from herd.drivers.nova.spec import PROPERTIES_SCHEMA, validate_server_properties
from herd.errors import InvalidSpec

# Senlin's own sample (examples/profiles/nova_server/cirros_basic.yaml), as its docs show it
SENLIN_DOC_SPEC = """
type: os.nova.server
version: 1.0
properties:
  name: cirros_server
  flavor: 1
  image: "cirros-0.4.0-x86_64-disk"
  key_name: oskey
  networks:
   - network: private
  metadata:
    test_key: test_value
  user_data: |
    #!/bin/sh
    echo 'hello, world' > /tmp/test_file
"""


def _ok(**props: Any) -> dict[str, Any]:
    return validate_server_properties({"flavor": "m1.tiny", "image": "cirros", **props})


def _bad(props: dict[str, Any]) -> InvalidSpec:
    with pytest.raises(InvalidSpec) as caught:
        validate_server_properties(props)
    return caught.value


def _bad_key(**props: Any) -> InvalidSpec:
    return _bad({"flavor": "m1.tiny", "image": "cirros", **props})


def test_senlin_doc_spec_validates_unchanged() -> None:
    spec = yaml.safe_load(SENLIN_DOC_SPEC)
    props = validate_server_properties(spec["properties"])
    assert props["flavor"] == "1"  # YAML's integer, a flavor id as Senlin read it
    assert props["image"] == "cirros-0.4.0-x86_64-disk"
    assert props["networks"] == [{"network": "private"}]
    assert props["metadata"] == {"test_key": "test_value"}
    assert str(props["user_data"]).startswith("#!/bin/sh")
    assert props["auto_disk_config"] is True


def test_defaults_of_a_minimal_spec() -> None:
    props = validate_server_properties({"flavor": "m1.tiny", "image": "cirros"})
    assert props == {
        "context": {},
        "admin_pass": None,
        "auto_disk_config": True,
        "availability_zone": None,
        "block_device_mapping_v2": None,
        "config_drive": None,
        "flavor": "m1.tiny",
        "image": "cirros",
        "key_name": None,
        "metadata": {},
        "name": None,
        "networks": [],
        "personality": None,
        "scheduler_hints": {},
        "security_groups": [],
        "user_data": None,
    }
    assert set(props) == set(PROPERTIES_SCHEMA)


def test_every_senlin_key_is_described_with_its_type() -> None:
    assert PROPERTIES_SCHEMA["flavor"]["required"] is True
    assert PROPERTIES_SCHEMA["flavor"]["updatable"] is True
    assert PROPERTIES_SCHEMA["networks"]["type"] == "List"
    assert PROPERTIES_SCHEMA["context"]["type"] == "Map"


def test_unknown_key_and_not_a_map() -> None:
    error = _bad_key(colour="red")
    assert error.field == "properties.colour"
    assert str(error) == "properties.colour: Unrecognizable spec item 'colour'"
    assert _bad("flavor").field == "properties"  # type: ignore[arg-type]


def test_flavor_is_required() -> None:
    error = _bad({"image": "cirros"})
    assert error.field == "properties.flavor"
    assert "Required spec item 'flavor' not provided" in str(error)
    assert _bad({"flavor": "", "image": "cirros"}).field == "properties.flavor"


@pytest.mark.parametrize("key", ["flavor", "image", "name", "key_name", "admin_pass"])
def test_strings_take_scalars_and_refuse_the_rest(key: str) -> None:
    assert _ok(**{key: 42})[key] == "42"
    error = _bad_key(**{key: ["a"]})
    assert error.field == f"properties.{key}"
    assert "is not a valid string." in str(error)
    assert "is not a valid string." in str(_bad_key(**{key: True}))


def test_availability_zone() -> None:
    assert _ok(availability_zone="az1")["availability_zone"] == "az1"
    assert _bad_key(availability_zone={"a": 1}).field == "properties.availability_zone"


@pytest.mark.parametrize(
    ("given", "expected"),
    [(True, True), ("false", False), ("YES", True), ("off", False), (0, False), ("1", True)],
)
def test_booleans_as_senlin_parsed_them(given: Any, expected: bool) -> None:
    assert _ok(config_drive=given)["config_drive"] is expected
    assert _ok(auto_disk_config=given)["auto_disk_config"] is expected


@pytest.mark.parametrize("key", ["config_drive", "auto_disk_config"])
def test_bad_booleans(key: str) -> None:
    error = _bad_key(**{key: "maybe"})
    assert error.field == f"properties.{key}"
    assert "The value 'maybe' is not a valid Boolean" in str(error)


def test_metadata() -> None:
    assert _ok(metadata={"a": "b", "n": 3})["metadata"] == {"a": "b", "n": "3"}
    assert "is not a Map" in str(_bad_key(metadata=["a"]))
    assert _bad_key(metadata={"a": "x" * 256}).field == "properties.metadata.a"
    assert _bad_key(metadata={"k" * 256: "x"}).field == "properties.metadata"
    assert _bad_key(metadata={"a": {"deep": 1}}).field == "properties.metadata.a"


def test_user_data() -> None:
    assert _ok(user_data="#cloud-config\n")["user_data"] == "#cloud-config\n"
    error = _bad_key(user_data="x" * 60000)
    assert error.field == "properties.user_data" and "65535" in str(error)


def test_security_groups() -> None:
    assert _ok(security_groups=["default", "web"])["security_groups"] == ["default", "web"]
    assert "is not a List" in str(_bad_key(security_groups="default"))
    assert _bad_key(security_groups=["ok", {"x": 1}]).field == "properties.security_groups[1]"


def test_scheduler_hints() -> None:
    hints = _ok(scheduler_hints={"group": "g1", "same_host": ["a", "b"]})["scheduler_hints"]
    assert hints == {"group": "g1", "same_host": ["a", "b"]}
    assert "is not a Map" in str(_bad_key(scheduler_hints="group=g1"))
    assert _bad_key(scheduler_hints={"group": {"x": 1}}).field == "properties.scheduler_hints.group"


def test_context_region_name_and_senlin_keys() -> None:
    assert _ok(context={"region_name": "RegionTwo"})["context"] == {"region_name": "RegionTwo"}
    assert _ok(context={})["context"] == {}
    error = _bad_key(context={"colour": "x"})
    assert error.field == "properties.context"
    assert "Some keys in 'context' are invalid: ['colour']" in str(error)
    # a key Senlin knew but herd cannot honour: named, with the reason
    error = _bad_key(context={"region_name": "R", "password": "secret"})
    assert error.field == "properties.context.password"
    assert "only 'region_name' is honoured" in str(error)
    assert "secret" not in str(error)
    assert "is not a Map" in str(_bad_key(context="RegionOne"))


def test_networks_good() -> None:
    nets = _ok(
        networks=[{"network": "private"}, {"port": "p-1"}, {"network": "n", "fixed_ip": "10.0.0.5"}]
    )
    assert nets["networks"] == [
        {"network": "private"},
        {"port": "p-1"},
        {"network": "n", "fixed_ip": "10.0.0.5"},
    ]


@pytest.mark.parametrize(
    ("network", "field", "text"),
    [
        ({}, "properties.networks[0]", "One of 'port' and 'network' must be provided"),
        (
            {"port": "p", "fixed_ip": "10.0.0.1"},
            "properties.networks[0]",
            "The 'port' property and the 'fixed_ip' property cannot be specified",
        ),
        ({"network": "n", "vnic_type": "weird"}, "properties.networks[0].vnic_type", "weird"),
        ({"network": "n", "mtu": 9000}, "properties.networks[0].mtu", "Unrecognizable"),
        (
            {"network": "n", "floating_network": "public"},
            "properties.networks[0].floating_network",
            "floating IPs",
        ),
        (
            {"network": "n", "floating_ip": "1.2.3.4"},
            "properties.networks[0].floating_ip",
            "floating IPs",
        ),
        (
            {"network": "n", "security_groups": ["web"]},
            "properties.networks[0].security_groups",
            "per-port",
        ),
        ({"network": "n", "vnic_type": "direct"}, "properties.networks[0].vnic_type", "per-port"),
        ({"network": "n", "subnet": "s1"}, "properties.networks[0].subnet", "per-port"),
        ("private", "properties.networks[0]", "is not a Map"),
    ],
)
def test_networks_bad(network: Any, field: str, text: str) -> None:
    error = _bad_key(networks=[network])
    assert error.field == field
    assert text in str(error)


def test_networks_not_a_list() -> None:
    assert "is not a List" in str(_bad_key(networks={"network": "private"}))


def test_block_device_mapping_v2() -> None:
    boot = {
        "uuid": "img-1",
        "source_type": "image",
        "destination_type": "local",
        "volume_size": "1",
        "boot_index": 0,
        "delete_on_termination": "true",
    }
    props = validate_server_properties({"flavor": "f", "block_device_mapping_v2": [boot]})
    assert props["image"] is None
    assert props["block_device_mapping_v2"] == [
        {**boot, "volume_size": 1, "delete_on_termination": True}
    ]


@pytest.mark.parametrize(
    ("device", "field", "text"),
    [
        (
            {"destination_type": "local", "volume_size": 1},
            "properties.block_device_mapping_v2[0]",
            "'source_type' not provided",
        ),
        (
            {"source_type": "blank", "volume_size": 1},
            "properties.block_device_mapping_v2[0]",
            "'destination_type' not provided",
        ),
        (
            {"source_type": "blank", "destination_type": "local"},
            "properties.block_device_mapping_v2[0]",
            "'volume_size' not provided",
        ),
        (
            {"source_type": "disk", "destination_type": "local", "volume_size": 1},
            "properties.block_device_mapping_v2[0].source_type",
            "'disk'",
        ),
        (
            {"source_type": "blank", "destination_type": "tape", "volume_size": 1},
            "properties.block_device_mapping_v2[0].destination_type",
            "'tape'",
        ),
        (
            {"source_type": "blank", "destination_type": "local", "volume_size": "big"},
            "properties.block_device_mapping_v2[0].volume_size",
            "not a valid Integer",
        ),
        (
            {"source_type": "volume", "destination_type": "volume", "volume_size": 1},
            "properties.block_device_mapping_v2[0]",
            "needs the 'uuid'",
        ),
        (
            {"source_type": "blank", "destination_type": "local", "volume_size": 1, "wwn": 1},
            "properties.block_device_mapping_v2[0].wwn",
            "Unrecognizable",
        ),
    ],
)
def test_block_device_mapping_v2_bad(device: dict[str, Any], field: str, text: str) -> None:
    error = _bad_key(block_device_mapping_v2=[device])
    assert error.field == field
    assert text in str(error)


def test_image_or_boot_device_is_needed() -> None:
    error = _bad({"flavor": "f"})
    assert error.field == "properties.image"


def test_personality_is_refused_with_the_reason() -> None:
    error = _bad_key(personality=[{"path": "/etc/motd", "contents": "hi"}])
    assert error.field == "properties.personality"
    assert "2.57" in str(error)
    assert _ok(personality=[])["personality"] is None
