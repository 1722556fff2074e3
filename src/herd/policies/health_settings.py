"""A health policy's properties, read into the settings the health manager works with.

Senlin's health policy has two spec shapes. 1.0 names one detection ``type``
with ``options`` (the polling ``interval`` among them); 1.1 lists
``detection_modes`` and puts ``interval``, ``node_update_timeout`` and
``recovery_conditional`` beside them. Both read into one
:class:`HealthSettings`, so nothing downstream knows which shape was used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from herd.errors import InvalidSpec
from herd.json_types import float_value, int_value, list_at, object_at, str_at
from herd.types import DetectionType, RecoveryConditional, RecoveryOperation

#: Detection types that ask something on a schedule (every ``interval`` seconds).
POLLING_TYPES = frozenset({DetectionType.NODE_STATUS_POLLING, DetectionType.NODE_STATUS_POLL_URL})


@dataclass(frozen=True, slots=True)
class DetectionMode:
    """One way of finding failed members, with the poll URL options Senlin gives it."""

    type: DetectionType
    poll_url: str = ""
    poll_url_ssl_verify: bool = True
    poll_url_conn_error_as_unhealthy: bool = True
    poll_url_healthy_response: str = ""
    poll_url_retry_limit: int = 3
    poll_url_retry_interval: float = 3.0
    #: where the mode's options are in the spec (for errors naming the field)
    path: str = field(default="", compare=False)

    @property
    def is_polling(self) -> bool:
        return self.type in POLLING_TYPES


@dataclass(frozen=True, slots=True)
class HealthSettings:
    """What a health policy asks of the health manager."""

    modes: tuple[DetectionMode, ...]
    interval: float = 60.0
    node_update_timeout: float = 300.0
    recovery_conditional: RecoveryConditional = RecoveryConditional.ANY_FAILED
    operation: RecoveryOperation = RecoveryOperation.RECREATE
    operation_params: dict[str, object] = field(default_factory=dict)
    fencing: tuple[str, ...] = ()
    node_delete_timeout: float = 20.0
    node_force_recreate: bool = False

    @property
    def polling_modes(self) -> tuple[DetectionMode, ...]:
        return tuple(mode for mode in self.modes if mode.is_polling)

    @property
    def watches_events(self) -> bool:
        return any(mode.type is DetectionType.LIFECYCLE_EVENTS for mode in self.modes)

    def mode_names(self) -> list[str]:
        return [mode.type.value for mode in self.modes]


def _mode(raw_type: str, options: Mapping[str, object], path: str) -> DetectionMode:
    kind = DetectionType(raw_type)
    if kind is DetectionType.HYPERVISOR_STATUS_POLLING:
        raise InvalidSpec(
            f"{path}.type: HYPERVISOR_STATUS_POLLING is not supported: herd nodes run on no "
            "hypervisor it could ask (use NODE_STATUS_POLLING)",
            field=f"{path}.type",
        )
    poll_url = str(options.get("poll_url") or "")
    if kind is DetectionType.NODE_STATUS_POLL_URL and not poll_url.strip():
        raise InvalidSpec(
            f"{path}.options.poll_url: required when type is NODE_STATUS_POLL_URL",
            field=f"{path}.options.poll_url",
        )
    if poll_url.strip():
        parts = urlsplit(poll_url.strip())
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise InvalidSpec(
                f"{path}.options.poll_url: only http and https URLs with a host are "
                f"allowed, got '{poll_url}'",
                field=f"{path}.options.poll_url",
            )
    pattern = str(options.get("poll_url_healthy_response") or "")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidSpec(
            f"{path}.options.poll_url_healthy_response: '{pattern}' is not a valid regular "
            f"expression: {exc}",
            field=f"{path}.options.poll_url_healthy_response",
        ) from None
    return DetectionMode(
        type=kind,
        poll_url=poll_url,
        poll_url_ssl_verify=bool(options.get("poll_url_ssl_verify", True)),
        poll_url_conn_error_as_unhealthy=bool(
            options.get("poll_url_conn_error_as_unhealthy", True)
        ),
        poll_url_healthy_response=pattern,
        poll_url_retry_limit=int_value(options.get("poll_url_retry_limit", 3)),
        poll_url_retry_interval=float_value(options.get("poll_url_retry_interval", 3)),
        path=f"{path}.options",
    )


def _maps(items: Sequence[object]) -> list[Mapping[str, object]]:
    # the schema made every item of these lists a map
    return [item for item in items if isinstance(item, Mapping)]


def read_health_settings(
    properties: Mapping[str, object], given: Mapping[str, object] | None = None
) -> HealthSettings:
    """Read validated health policy properties into :class:`HealthSettings`.

    Args:
        properties: the properties as the schema returned them (defaults filled in).
        given: the properties as written in the spec, to tell a 1.0 spec (``type``)
            from a 1.1 one (``detection_modes``) and an explicit value from a default.
            Defaults to ``properties``.

    Raises:
        InvalidSpec: the spec names both shapes or none, repeats a mode, uses a
            detection type herd cannot serve, lacks a poll URL, or lists several
            recovery actions; ``field`` is the dotted key.
    """
    raw = given if given is not None else properties
    raw_detection = object_at(raw, "detection")
    detection = object_at(properties, "detection")
    recovery = object_at(properties, "recovery")
    path = "properties.detection"
    one_mode = raw_detection.get("type") is not None
    many_modes = raw_detection.get("detection_modes") is not None
    if one_mode and many_modes:
        raise InvalidSpec(
            f"{path}: give either 'type' with 'options' (1.0) or 'detection_modes' (1.1), not both",
            field=path,
        )
    if one_mode:
        options = object_at(detection, "options")
        modes = [_mode(str_at(detection, "type"), options, path)]
        interval = options["interval"]
        if "interval" in raw_detection:
            interval = detection["interval"]
        timeout = recovery["node_update_timeout"]
        if "node_update_timeout" in raw_detection:
            timeout = detection["node_update_timeout"]
    elif detection["detection_modes"]:
        modes = [
            _mode(str_at(item, "type"), object_at(item, "options"), f"{path}.detection_modes[{i}]")
            for i, item in enumerate(_maps(list_at(detection, "detection_modes")))
        ]
        interval = detection["interval"]
        timeout = detection["node_update_timeout"]
    else:
        raise InvalidSpec(
            f"{path}: no detection mode given (set 'type' or 'detection_modes')", field=path
        )
    names = [mode.type.value for mode in modes]
    if len(set(names)) != len(names):
        raise InvalidSpec(
            "Duplicate detection modes are not allowed in health policy: " + ", ".join(names),
            field=f"{path}.detection_modes",
        )
    actions = _maps(list_at(recovery, "actions"))
    if len(actions) > 1:
        raise InvalidSpec(
            "Only one 'actions' is supported for now.", field="properties.recovery.actions"
        )
    action: Mapping[str, object] = actions[0] if actions else {"name": "RECREATE", "params": {}}
    return HealthSettings(
        modes=tuple(modes),
        interval=float_value(interval),
        node_update_timeout=float_value(timeout),
        recovery_conditional=RecoveryConditional(str_at(detection, "recovery_conditional")),
        operation=RecoveryOperation(str_at(action, "name")),
        operation_params=dict(object_at(action, "params")),
        fencing=tuple(str(item) for item in list_at(recovery, "fencing")),
        node_delete_timeout=float_value(recovery["node_delete_timeout"]),
        node_force_recreate=bool(recovery["node_force_recreate"]),
    )
