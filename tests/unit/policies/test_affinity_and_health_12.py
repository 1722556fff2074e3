"""senlin.policy.affinity-1.0 (validation, Nova only) and senlin.policy.health-1.2."""

from __future__ import annotations

from typing import Any

import pytest

from herd.errors import InvalidSpec
from herd.policies.affinity import AffinityPolicy
from herd.policies.health import HealthPolicy
from herd.policies.registry import default_policy_registry


def _affinity(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.affinity", "version": "1.0", "properties": properties}


def test_affinity_defaults_are_senlins() -> None:
    type_name, policy = default_policy_registry().create(_affinity())
    assert type_name == "senlin.policy.affinity-1.0"
    assert isinstance(policy, AffinityPolicy)
    assert policy.properties == {
        "servergroup": {"name": None, "policies": "anti-affinity"},
        "availability_zone": None,
        "enable_drs_extension": False,
    }
    assert policy.priority == 300
    assert AffinityPolicy.profile_types == (
        "os.nova.server-1.0",
        "os.nova.server-1.1",
        "os.nova.server-1.2",
    )


@pytest.mark.parametrize(
    ("properties", "field", "text"),
    [
        ({"servergroup": {"policies": "together"}}, "properties.servergroup.policies", "one of"),
        ({"servergroup": {"size": 2}}, "properties.servergroup.size", "Unrecognizable"),
        ({"enable_drs_extension": "maybe"}, "properties.enable_drs_extension", "Boolean"),
        ({"availability_zone": 3}, "properties.availability_zone", "not a valid string"),
    ],
)
def test_affinity_refuses_bad_specs(properties: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        default_policy_registry().create(_affinity(**properties))
    assert caught.value.field == field
    assert text in str(caught.value)


HEALTH_12 = {
    "type": "senlin.policy.health",
    "version": 1.2,
    "properties": {
        "detection": {
            "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
            "interval": 30,
        },
        "recovery": {"actions": [{"name": "RECREATE"}]},
    },
}


def test_health_12_is_accepted_like_11() -> None:
    registry = default_policy_registry()
    type_name, policy = registry.create(HEALTH_12)
    assert type_name == "senlin.policy.health-1.2"
    assert isinstance(policy, HealthPolicy)
    _, older = registry.create({**HEALTH_12, "version": "1.1"})
    assert policy.settings == older.settings  # type: ignore[attr-defined]


def test_health_12_refuses_hypervisor_polling_with_the_reason() -> None:
    spec = {
        **HEALTH_12,
        "properties": {"detection": {"detection_modes": [{"type": "HYPERVISOR_STATUS_POLLING"}]}},
    }
    with pytest.raises(InvalidSpec) as caught:
        default_policy_registry().create(spec)
    assert "HYPERVISOR_STATUS_POLLING is not supported" in str(caught.value)
    assert "no hypervisor" in str(caught.value)
