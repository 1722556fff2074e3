"""The ``os.heat.stack`` spec: Senlin's keys, defaults and texts, checked without Heat."""

from __future__ import annotations

from typing import Any

import pytest

from herd.drivers.base import NodeRequest
from herd.drivers.heat.spec import PROPERTIES_SCHEMA, validate_stack_properties
from herd.drivers.heat.stacks import (
    HEAT_TIMEOUT_GRACE,
    operation_timeout,
    stack_arguments,
    stack_name,
    stack_tags,
)
from herd.drivers.registry import DriverRegistry, default_driver_registry
from herd.errors import InvalidSpec

TEMPLATE = {
    "heat_template_version": "2014-10-16",
    "resources": {"random": {"type": "OS::Heat::RandomString"}},
}


def test_defaults_are_senlins() -> None:
    assert validate_stack_properties({"template": TEMPLATE}) == {
        "context": {},
        "template": TEMPLATE,
        "template_url": "",
        "parameters": {},
        "files": {},
        "timeout": None,
        "disable_rollback": True,
        "environment": {},
    }


def test_every_key_is_kept() -> None:
    props = validate_stack_properties(
        {
            "context": {"region_name": "RegionTwo"},
            "template_url": "http://example.test/t.yaml",
            "parameters": {"str_length": 8},
            "files": {"a.yaml": "x"},
            "timeout": "5",
            "disable_rollback": "false",
            "environment": {"parameters": {}},
        }
    )
    assert props["context"] == {"region_name": "RegionTwo"}
    assert props["template"] == {} and props["template_url"] == "http://example.test/t.yaml"
    assert props["timeout"] == 5 and props["disable_rollback"] is False


@pytest.mark.parametrize(
    ("properties", "field", "text"),
    [
        ({}, "properties.template", "Both template and template_url are not specified"),
        (
            {"template": {}, "template_url": ""},
            "properties.template",
            "Both template and template_url are not specified",
        ),
        ({"template": "x"}, "properties.template", "'x' is not a Map"),
        ({"template": TEMPLATE, "parameters": [1]}, "properties.parameters", "'[1]' is not a Map"),
        ({"template": TEMPLATE, "files": "f"}, "properties.files", "'f' is not a Map"),
        ({"template": TEMPLATE, "environment": 3}, "properties.environment", "'3' is not a Map"),
        (
            {"template": TEMPLATE, "timeout": "soon"},
            "properties.timeout",
            "The value 'soon' is not a valid Integer",
        ),
        (
            {"template": TEMPLATE, "timeout": 0},
            "properties.timeout",
            "The timeout must be a positive number of minutes, not 0",
        ),
        (
            {"template": TEMPLATE, "disable_rollback": "maybe"},
            "properties.disable_rollback",
            "The value 'maybe' is not a valid Boolean",
        ),
        (
            {"template": TEMPLATE, "template_url": ["u"]},
            "properties.template_url",
            "The value '['u']' is not a valid string.",
        ),
        (
            {"template": TEMPLATE, "bogus": 1},
            "properties.bogus",
            "Unrecognizable spec item 'bogus'",
        ),
        (
            {"template": TEMPLATE, "context": {"password": "p"}},
            "properties.context.password",
            "herd does not honour 'password' in a profile's context",
        ),
        (
            {"template": TEMPLATE, "context": {"colour": "red"}},
            "properties.context",
            "Some keys in 'context' are invalid: ['colour']",
        ),
    ],
)
def test_invalid_properties_name_the_field(
    properties: dict[str, Any], field: str, text: str
) -> None:
    with pytest.raises(InvalidSpec) as caught:
        validate_stack_properties(properties)
    assert caught.value.field == field
    assert caught.value.message.startswith(f"{field}: {text}")


def test_not_a_map_is_refused() -> None:
    with pytest.raises(InvalidSpec) as caught:
        validate_stack_properties(["template"])
    assert caught.value.field == "properties"


def test_the_schema_is_senlins() -> None:
    assert set(PROPERTIES_SCHEMA) == {
        "context", "template", "template_url", "parameters", "files", "timeout",
        "disable_rollback", "environment",
    }  # fmt: skip
    assert PROPERTIES_SCHEMA["disable_rollback"]["default"] is True
    assert all(
        PROPERTIES_SCHEMA[key].get("updatable") for key in PROPERTIES_SCHEMA if key != "context"
    )


def test_stack_fields_from_properties() -> None:
    props = validate_stack_properties({"template": TEMPLATE, "timeout": 2})
    assert stack_arguments(props) == {
        "template": TEMPLATE,
        "parameters": {},
        "files": {},
        "environment": {},
        "disable_rollback": True,
        "timeout_mins": 2,
    }
    # Heat enforces the timeout itself; herd waits a little longer for Heat's own verdict
    assert operation_timeout(props, 600.0) == 120.0 + HEAT_TIMEOUT_GRACE
    by_url = validate_stack_properties({"template_url": "http://t"})
    assert stack_arguments(by_url)["template_url"] == "http://t"
    assert "template" not in stack_arguments(by_url) and "timeout_mins" not in stack_arguments(
        by_url
    )
    assert operation_timeout(by_url, 600.0) == 600.0


@pytest.mark.parametrize(
    ("name", "expected"),
    [("web", "web-0123abcd"), ("node 1/ä", "node-1---0123abcd"), ("1st", "node-1st-0123abcd")],
)
def test_stack_names_are_valid_for_heat(name: str, expected: str) -> None:
    request = NodeRequest("0123abcd-ffff", name, 3, "c1", {})
    assert stack_name(request) == expected
    assert stack_tags(request, "herd-x") == [
        "herd-x", "cluster_node_id=0123abcd-ffff", "cluster_id=c1", "cluster_node_index=3",
    ]  # fmt: skip


def test_profile_types_list_the_heat_type_with_its_schema(tmp_path: Any) -> None:
    registry: DriverRegistry = default_driver_registry(tmp_path)
    described = registry.describe("os.heat.stack-1.0")
    assert described["version"] == "1.0"
    schema = described["schema"]
    assert isinstance(schema, dict) and schema["template"]["updatable"] is True
    assert schema["context"]["updatable"] is False
    assert described["support_status"] == {"1.0": [{"status": "SUPPORTED", "since": "2016.04"}]}
    registry.close()
