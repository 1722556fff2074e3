"""The policy registry and top-level spec parsing."""

from __future__ import annotations

from typing import Any

import pytest

from herd.errors import InvalidSpec, NotFound
from herd.policies.deletion import DeletionPolicy
from herd.policies.health import HealthPolicy
from herd.policies.registry import PolicyRegistry, default_policy_registry
from herd.policies.spec import Boolean, parse_spec
from herd.types import POLICY_PRIORITY

DELETION = {"type": "senlin.policy.deletion", "version": 1.1, "properties": {}}


@pytest.mark.parametrize(
    ("spec", "message", "field"),
    [
        ([1, 2], "The provided spec is not a map.", "spec"),
        ("- a\n- b\n", "The provided spec is not a map.", "spec"),
        (
            {"version": 1.0, "properties": {}},
            "The 'type' key is missing from the provided spec map.",
            "type",
        ),
        (
            {"type": "x", "properties": {}},
            "The 'version' key is missing from the provided spec map.",
            "version",
        ),
        (
            {"type": "senlin.policy.deletion", "version": 1.0},
            "Required spec item 'properties' not provided",
            "properties",
        ),
        (
            {"type": "t", "version": 1, "properties": {}, "extra": 1},
            "Unrecognizable spec item 'extra'",
            "extra",
        ),
        ({"type": "t", "version": 1, "properties": 5}, "'5' is not a Map", "properties"),
    ],
)
def test_top_level_errors(spec: Any, message: str, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        parse_spec(spec)
    assert (info.value.message, info.value.field) == (message, field)


def test_bad_yaml_is_invalid_spec() -> None:
    with pytest.raises(InvalidSpec) as info:
        parse_spec("type: [unclosed")
    assert info.value.message.startswith("Failed parsing the spec:")


def test_json_text_and_versions() -> None:
    text = '{"type": "senlin.policy.deletion", "version": "1.0", "properties": {}}'
    assert parse_spec(text).version == "1.0"
    assert parse_spec(DELETION).version == "1.1"
    assert parse_spec(DELETION | {"version": 1}).version == "1.0"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("yes", True), ("No", False), ("1", True), (0, False), ("on", True), ("OFF", False)],
)
def test_strict_boolean(value: Any, expected: bool) -> None:
    assert Boolean().resolve(value, "properties.x") is expected


def test_unknown_type_and_version() -> None:
    registry = default_policy_registry()
    # a type herd does not provide: Senlin's ResourceNotFound (404) and text
    with pytest.raises(NotFound) as missing:
        registry.create({"type": "senlin.policy.lb", "version": "1.0", "properties": {}})
    assert missing.value.message == ("The policy_type 'senlin.policy.lb-1.0' could not be found.")
    with pytest.raises(InvalidSpec) as info:
        registry.create(DELETION | {"version": "2.0"})
    assert info.value.message == (
        "The specified version (2.0) of policy type (senlin.policy.deletion) is not supported. "
        "Supported versions: 1.0, 1.1."
    )


def test_aliases() -> None:
    registry = default_policy_registry()
    kind, p = registry.create(DELETION | {"type": "herd.policy.deletion"})
    assert kind == "senlin.policy.deletion-1.1" and isinstance(p, DeletionPolicy)
    assert registry.resolve_full("herd.policy.deletion-1.1") is DeletionPolicy
    assert registry.resolve("herd.policy.health", "1.0") is HealthPolicy
    assert registry.supported_versions("herd.policy.deletion") == ["1.0", "1.1"]


def test_types_listing_and_priorities() -> None:
    registry = default_policy_registry()
    names = [t["name"] for t in registry.types()]
    assert names == [
        "senlin.policy.affinity-1.0",
        "senlin.policy.batch-1.0",
        "senlin.policy.deletion-1.0",
        "senlin.policy.deletion-1.1",
        "senlin.policy.health-1.0",
        "senlin.policy.health-1.1",
        "senlin.policy.health-1.2",
        "senlin.policy.region_placement-1.0",
        "senlin.policy.scaling-1.0",
        "senlin.policy.zone_placement-1.0",
    ]
    row = registry.types()[3]
    assert row == {
        "name": "senlin.policy.deletion-1.1",
        "version": "1.1",
        "support_status": {"1.1": [{"status": "SUPPORTED", "since": "2018.01"}]},
    }
    for version in ("1.0", "1.1"):
        assert (
            registry.resolve("senlin.policy.deletion", version).priority
            == POLICY_PRIORITY["deletion"]
        )
    for family in ("scaling", "region_placement", "zone_placement", "health"):
        cls = registry.resolve(f"senlin.policy.{family}", "1.0")
        assert cls.priority == POLICY_PRIORITY[family]


def test_registries_are_independent() -> None:
    empty = PolicyRegistry()
    with pytest.raises(NotFound):
        empty.resolve("senlin.policy.deletion", "1.1")
    empty.register(DeletionPolicy)
    assert empty.resolve("senlin.policy.deletion", "1.0") is DeletionPolicy
    with pytest.raises(ValueError, match="already registered"):
        empty.register(type("Other", (DeletionPolicy,), {}))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {
                "type": "senlin.policy.scaling",
                "version": "1.0",
                "properties": {"event": "CLUSTER_SCALE_OUT", "adjustment": {"number": "x"}},
            },
            "properties.adjustment.number: The value 'x' is not a valid number.",
        ),
        (
            {
                "type": "senlin.policy.zone_placement",
                "version": "1.0",
                "properties": {"zones": [{"name": "a", "weight": "x"}]},
            },
            "properties.zones[0].weight: The value 'x' is not a valid Integer",
        ),
        (
            {
                "type": "senlin.policy.region_placement",
                "version": "1.0",
                "properties": {"regions": [{"cap": 1}]},
            },
            "properties.regions[0].name: Required spec item 'name' not provided",
        ),
        (
            {
                "type": "senlin.policy.health",
                "version": "1.1",
                "properties": {"detection": {"interval": "x"}},
            },
            "properties.detection.interval: The value 'x' is not a valid Integer",
        ),
    ],
)
def test_property_errors_lead_with_the_key(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        default_policy_registry().create(spec)
    assert info.value.message == message
    assert message.startswith(f"{info.value.field}: ")
