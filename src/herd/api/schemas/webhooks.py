"""Bodies posted to a receiver's URLs: a webhook trigger, and an Alertmanager notification.

Both come from other systems, which add keys of their own, so unknown keys are
allowed here (and ignored), unlike in every other request body.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field, ValidationInfo

from herd.api.schemas.base import JsonMap, RequestModel, fail, one_of, senlin_str
from herd.domain.alerts import AlertStatus

ALERT_STATUSES = tuple(status.value for status in AlertStatus)
ALERTMANAGER_VERSION = "4"


class WebhookTrigger(RequestModel):
    """``POST /v1/webhooks/<id>/trigger``: ``{"params": {...}}``; other keys are ignored.

    They are the sender's own payload (an Aodh or Grafana alarm, say), not action inputs.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    params: JsonMap = None


def _labels(value: object, info: ValidationInfo) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(f"The value ({value}) is not a valid JSON map for '{info.field_name}'.")
    return {str(key): str(item) for key, item in value.items()}


def _version(value: object, info: ValidationInfo) -> str:
    if value is None:
        raise fail("'version' is a required property")
    if str(value) != ALERTMANAGER_VERSION:
        raise fail(
            f"Unsupported Alertmanager payload version '{value}': herd reads version "
            f"{ALERTMANAGER_VERSION}."
        )
    return str(value)


AlertStatusField = Annotated[str | None, one_of(ALERT_STATUSES)]
Timestamp = Annotated[str, senlin_str(required=True, non_empty=True)]


class AlertmanagerAlert(RequestModel):
    """One alert of a notification: the keys herd reads (the others are ignored)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    status: AlertStatusField
    labels: Annotated[dict[str, str], BeforeValidator(_labels)] = Field(default_factory=dict)
    starts_at: Timestamp = Field(alias="startsAt")
    fingerprint: Annotated[str | None, senlin_str()] = None


class AlertmanagerNotification(RequestModel):
    """``POST /v1/webhooks/<id>/alertmanager``: Alertmanager's webhook payload, version 4."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    version: Annotated[str, BeforeValidator(_version)]
    status: AlertStatusField
    group_key: Annotated[str, senlin_str(required=True, max_length=65536)] = Field(alias="groupKey")
    alerts: list[AlertmanagerAlert]
