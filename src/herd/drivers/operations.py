"""Profile operations (Senlin API 1.4): their schemas, validation, and the driver contract.

A driver that supports operations declares ``operations_schema`` (name ->
:class:`OperationSpec`) and implements :meth:`OperationsDriver.run_operation`.
The API validates a request against the schema before storing an action, and
the engine validates again before calling the driver, so a stored action with
bad parameters can never reach a resource.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.errors import InvalidRequest

#: signals a process cannot catch; ``signal`` refuses them unless the operator allows them
UNCATCHABLE_SIGNALS = frozenset({"SIGKILL", "SIGSTOP"})


@dataclass(frozen=True)
class OperationParameter:
    """One parameter of an operation, shown in Senlin's schema format."""

    type: str  # Senlin's schema type name: String, Integer, Number, Boolean
    description: str
    required: bool = False
    #: the values Senlin's AllowedValues constraint took (None: any)
    allowed: tuple[str, ...] | None = None


@dataclass(frozen=True)
class OperationSpec:
    description: str
    parameters: Mapping[str, OperationParameter] = field(default_factory=dict)


_SIGNAL_PARAMETER = OperationParameter(
    "String",
    "Name of the signal (SIGHUP, HUP, SIGUSR1, ...). SIGKILL and SIGSTOP are refused "
    "unless the operator allows them (HERD_ALLOW_UNCATCHABLE_SIGNALS).",
    required=True,
)

PROCESS_OPERATIONS: dict[str, OperationSpec] = {
    "reboot": OperationSpec("Stop the node's process and start the same command again."),
    "stop": OperationSpec(
        "Stop the node's process group: its stop_signal, then SIGKILL after stop_timeout."
    ),
    "start": OperationSpec("Start the profile's command again for a stopped node."),
    "signal": OperationSpec(
        "Send a signal to the node's process group.", {"signal": _SIGNAL_PARAMETER}
    ),
    "pause": OperationSpec("Suspend the node's process group (SIGSTOP)."),
    "unpause": OperationSpec("Resume a paused process group (SIGCONT)."),
}

SIM_OPERATIONS: dict[str, OperationSpec] = {
    "reboot": OperationSpec("Simulate a reboot: the server keeps its id and counts the reboot."),
    "stop": OperationSpec("Simulate stopping the server; checks report it unhealthy."),
    "start": OperationSpec("Simulate starting a stopped server."),
    "signal": OperationSpec(
        "Record a signal as delivered to the simulated server.", {"signal": _SIGNAL_PARAMETER}
    ),
    "pause": OperationSpec("Simulate pausing the server; checks report it unhealthy."),
    "unpause": OperationSpec("Simulate resuming a paused server."),
}


@runtime_checkable
class OperationsDriver(Protocol):
    """What a driver implements to support operations."""

    operations_schema: ClassVar[Mapping[str, OperationSpec]]

    def run_operation(
        self,
        ref: ResourceRef,
        request: NodeRequest,
        operation: str,
        params: Mapping[str, object],
    ) -> CreatedResource:
        """Run one validated operation on a node's resource.

        Returns:
            The resource afterwards: its physical id (a new one when the operation
            replaced it, e.g. ``reboot`` of a process) and the data to merge into
            the node's data.

        Raises:
            DriverError: the operation could not be carried out.
        """
        ...


def describe_operations(specs: Mapping[str, OperationSpec]) -> dict[str, object]:
    """``GET /v1/profile-types/<type>/ops``: Senlin's ``{name: {description, parameters}}``."""
    return {
        name: {
            "description": spec.description,
            "parameters": {
                key: {
                    "type": parameter.type,
                    "description": parameter.description,
                    "required": parameter.required,
                }
                for key, parameter in spec.parameters.items()
            },
        }
        for name, spec in specs.items()
    }


def signal_number(value: object, *, allow_uncatchable: bool) -> signal.Signals:
    """A signal from its name (``SIGHUP``, ``hup``); InvalidRequest naming what is wrong."""
    text = value.strip().upper() if isinstance(value, str) else ""
    name = text if text.startswith("SIG") else f"SIG{text}"
    if not text or name not in signal.Signals.__members__:
        raise InvalidRequest(
            f"The value '{value}' of parameter 'signal' is not a signal name such as "
            "SIGHUP, SIGTERM or SIGUSR1.",
            field="signal",
        )
    if name in UNCATCHABLE_SIGNALS and not allow_uncatchable:
        raise InvalidRequest(
            f"Signal {name} is refused: a process cannot catch it, so it gets no chance to "
            "clean up. An operator can allow it with HERD_ALLOW_UNCATCHABLE_SIGNALS=true.",
            field="signal",
        )
    return signal.Signals[name]


def validate_operation(
    profile_type: str,
    specs: Mapping[str, OperationSpec],
    operation: object,
    params: object,
    *,
    allow_uncatchable: bool,
) -> dict[str, object]:
    """Check an operation request; return its parameters normalised.

    Raises:
        InvalidRequest: the operation is unknown for the profile type, or a
            parameter is unknown, missing or invalid (the text names it).
    """
    if not isinstance(operation, str) or operation not in specs:
        raise InvalidRequest(
            # Senlin's text exactly (its API tests compare it); the operations a profile
            # type has are listed by GET /v1/profile-types/<type>/ops
            f"The requested operation '{operation}' is not supported by the profile type "
            f"'{profile_type}'.",
            field="operation",
        )
    spec = specs[operation]
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise InvalidRequest(
            f"The parameters of operation '{operation}' must be a map, not '{params}'.",
            field="params",
        )
    unknown = sorted(str(key) for key in params if key not in spec.parameters)
    if unknown:
        allowed = ", ".join(sorted(spec.parameters)) or "none"
        raise InvalidRequest(
            f"Unrecognizable parameter(s) {', '.join(repr(k) for k in unknown)} for operation "
            f"'{operation}'; its parameters are: {allowed}.",
            field=unknown[0],
        )
    result: dict[str, object] = {}
    for key, parameter in spec.parameters.items():
        value = params.get(key)
        if value is None:
            if parameter.required:
                raise InvalidRequest(
                    f"Required parameter '{key}' of operation '{operation}' not provided.",
                    field=key,
                )
            continue
        if key == "signal":
            result[key] = signal_number(value, allow_uncatchable=allow_uncatchable).name
        elif parameter.allowed is not None and value not in parameter.allowed:
            raise InvalidRequest(
                f"'{value}' must be one of the allowed values: {', '.join(parameter.allowed)}.",
                field=key,
            )
        else:
            result[key] = value
    return result
