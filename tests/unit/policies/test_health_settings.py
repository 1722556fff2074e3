"""Reading a health policy (Senlin 1.0 and 1.1 shapes) into the health manager's settings."""

from __future__ import annotations

from typing import Any

import pytest

from herd.errors import InvalidSpec
from herd.policies.health import HealthPolicy
from herd.types import DetectionType, RecoveryConditional, RecoveryOperation

POLL_URL = {"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": "http://{nodename}/health"}}


def test_v10_one_type_with_options() -> None:
    policy = HealthPolicy(
        {
            "detection": {"type": "NODE_STATUS_POLLING", "options": {"interval": 15}},
            "recovery": {"actions": [{"name": "REBOOT"}], "fencing": ["COMPUTE"]},
        }
    )
    settings = policy.settings
    assert [m.type for m in settings.modes] == [DetectionType.NODE_STATUS_POLLING]
    assert settings.interval == 15  # 1.0 keeps the interval among the options
    assert settings.operation is RecoveryOperation.REBOOT
    assert settings.fencing == ("COMPUTE",)
    assert settings.recovery_conditional is RecoveryConditional.ANY_FAILED
    assert settings.node_update_timeout == 300 and settings.node_delete_timeout == 20
    assert not settings.watches_events and len(settings.polling_modes) == 1


def test_v11_several_modes_and_recovery_settings() -> None:
    policy = HealthPolicy(
        {
            "detection": {
                "detection_modes": [
                    {"type": "LIFECYCLE_EVENTS"},
                    {
                        "type": "NODE_STATUS_POLL_URL",
                        "options": {
                            "poll_url": "http://127.0.0.1:{port}/health",
                            "poll_url_ssl_verify": False,
                            "poll_url_conn_error_as_unhealthy": False,
                            "poll_url_healthy_response": "ok",
                            "poll_url_retry_limit": 2,
                            "poll_url_retry_interval": 1,
                        },
                    },
                ],
                "interval": 5,
                "node_update_timeout": 7,
                "recovery_conditional": "ALL_FAILED",
            },
            "recovery": {
                "actions": [{"name": "RECREATE"}],
                "node_delete_timeout": 3,
                "node_force_recreate": True,
            },
        }
    )
    settings = policy.settings
    assert settings.mode_names() == ["LIFECYCLE_EVENTS", "NODE_STATUS_POLL_URL"]
    assert settings.watches_events
    (poll,) = settings.polling_modes
    assert poll.poll_url == "http://127.0.0.1:{port}/health"
    assert (poll.poll_url_ssl_verify, poll.poll_url_conn_error_as_unhealthy) == (False, False)
    assert (poll.poll_url_retry_limit, poll.poll_url_retry_interval) == (2, 1.0)
    assert poll.poll_url_healthy_response == "ok"
    assert (settings.interval, settings.node_update_timeout) == (5, 7)
    assert settings.recovery_conditional is RecoveryConditional.ALL_FAILED
    assert (settings.node_delete_timeout, settings.node_force_recreate) == (3, True)


def test_defaults_without_recovery_recreate() -> None:
    settings = HealthPolicy({"detection": {"detection_modes": [POLL_URL]}}).settings
    assert settings.operation is RecoveryOperation.RECREATE
    assert settings.interval == 60
    (mode,) = settings.modes
    assert (mode.poll_url_retry_limit, mode.poll_url_retry_interval) == (3, 3.0)


@pytest.mark.parametrize(
    ("detection", "recovery", "field", "text"),
    [
        (
            {"type": "NODE_STATUS_POLLING", "detection_modes": [POLL_URL]},
            {},
            "properties.detection",
            "not both",
        ),
        ({}, {}, "properties.detection", "no detection mode given"),
        (
            {"detection_modes": [POLL_URL, POLL_URL]},
            {},
            "properties.detection.detection_modes",
            "Duplicate detection modes are not allowed in health policy: "
            "NODE_STATUS_POLL_URL, NODE_STATUS_POLL_URL",
        ),
        (
            {"detection_modes": [{"type": "HYPERVISOR_STATUS_POLLING"}]},
            {},
            "properties.detection.detection_modes[0].type",
            "HYPERVISOR_STATUS_POLLING is not supported",
        ),
        (
            {"detection_modes": [{"type": "NODE_STATUS_POLL_URL"}]},
            {},
            "properties.detection.detection_modes[0].options.poll_url",
            "required when type is NODE_STATUS_POLL_URL",
        ),
        (
            {
                "detection_modes": [
                    {
                        "type": "NODE_STATUS_POLL_URL",
                        "options": {"poll_url": "http://x", "poll_url_healthy_response": "(ok"},
                    }
                ]
            },
            {},
            "properties.detection.detection_modes[0].options.poll_url_healthy_response",
            "is not a valid regular expression",
        ),
        (
            {"type": "NODE_STATUS_POLLING"},
            {"actions": [{"name": "REBOOT"}, {"name": "RECREATE"}]},
            "properties.recovery.actions",
            "Only one 'actions' is supported for now.",
        ),
    ],
)
def test_spec_errors_name_the_field(
    detection: dict[str, Any], recovery: dict[str, Any], field: str, text: str
) -> None:
    with pytest.raises(InvalidSpec) as info:
        HealthPolicy({"detection": detection, "recovery": recovery})
    assert info.value.field == field
    assert text in info.value.message
