"""The ``herd.process-1.0`` profile properties: schema, defaults and validation."""

from __future__ import annotations

import contextlib
import re
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from herd.drivers.base import ResourceRef
from herd.errors import InvalidSpec
from herd.json_types import float_value, list_at, object_at, str_at, str_or_none

_PLACEHOLDER = re.compile(r"\{(name|index|node_id|cluster_id|port)\}")

_DEFAULTS: dict[str, object] = {
    "args": [],
    "env": {},
    "cwd": None,
    "health_url": None,
    "stop_signal": "SIGTERM",
    "stop_timeout": 10.0,
    "start_timeout": 10.0,
}

PROPERTIES_SCHEMA: dict[str, dict[str, object]] = {
    "command": {"type": "String", "required": True, "description": "Executable to run."},
    "args": {"type": "List", "default": [], "description": "Arguments (placeholders)."},
    "env": {"type": "Map", "default": {}, "description": "Extra environment (placeholders)."},
    "cwd": {"type": "String", "description": "Working directory of the process."},
    "health_url": {"type": "String", "description": "http URL that must answer 2xx."},
    "stop_signal": {"type": "String", "default": "SIGTERM", "description": "Stop signal."},
    "stop_timeout": {"type": "Number", "default": 10, "description": "Seconds before kill."},
    "start_timeout": {"type": "Number", "default": 10, "description": "Seconds to healthy."},
}


def _fail(key: str, reason: str) -> InvalidSpec:
    return InvalidSpec(f"properties.{key}: {reason}", field=f"properties.{key}")


def seconds_value(key: str, value: object) -> float:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 86400:
        raise _fail(key, f"'{value}' is not a number of seconds between 0 and 86400")
    return float(value)


def _scalar_text(key: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _fail(key, f"'{value}' is not a string")
    return str(value)


def signal_name(value: object) -> str:
    name = str(value).upper() if isinstance(value, str) else ""
    name = name if name.startswith("SIG") else f"SIG{name}"
    if name not in signal.Signals.__members__ or name in ("SIGCHLD", "SIGCONT"):
        raise _fail("stop_signal", f"'{value}' is not a signal name such as SIGTERM or SIGINT")
    return name


def validate_process_properties(properties: Mapping[str, object]) -> dict[str, object]:
    """Return ``herd.process`` properties with defaults, or raise InvalidSpec naming the key."""
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    for key in properties:
        if key not in PROPERTIES_SCHEMA:
            raise _fail(str(key), f"Unrecognizable spec item '{key}'")
    given = {**_DEFAULTS, **{k: v for k, v in properties.items() if v is not None}}
    command = given.get("command")
    if command is None:
        raise _fail("command", "Required spec item 'command' not provided")
    if not isinstance(command, str) or not command.strip():
        raise _fail("command", f"'{command}' is not a non-empty string")
    if not isinstance(given["args"], list):
        raise _fail("args", f"'{given['args']}' is not a List")
    args = [_scalar_text(f"args[{i}]", arg) for i, arg in enumerate(given["args"])]
    if not isinstance(given["env"], Mapping):
        raise _fail("env", f"'{given['env']}' is not a Map")
    env: dict[str, str] = {}
    for key, value in given["env"].items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise _fail("env", f"'{key}' is not a valid environment variable name")
        env[key] = _scalar_text(f"env.{key}", value)
    cwd = given["cwd"]
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise _fail("cwd", f"'{cwd}' is not a non-empty string")
    url = given["health_url"]
    if url is not None and (
        not isinstance(url, str) or not re.match(r"^https?://[^/\s]+(/\S*)?$", url)
    ):
        raise _fail("health_url", f"'{url}' is not an http or https URL")
    return {
        "command": command,
        "args": args,
        "env": env,
        "cwd": cwd,
        "health_url": url,
        "stop_signal": signal_name(given["stop_signal"]),
        "stop_timeout": seconds_value("stop_timeout", given["stop_timeout"]),
        "start_timeout": seconds_value("start_timeout", given["start_timeout"]),
    }


@dataclass(frozen=True)
class ProcessProperties:
    """Validated ``herd.process`` properties, typed (what spawning a node reads)."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
    health_url: str | None
    start_timeout: float


def process_properties(validated: Mapping[str, object]) -> ProcessProperties:
    """Type what :func:`validate_process_properties` returned (it checked every value)."""
    env = object_at(validated, "env")
    return ProcessProperties(
        command=str_at(validated, "command"),
        args=tuple(str(arg) for arg in list_at(validated, "args")),
        env={str(key): str(value) for key, value in env.items()},
        cwd=str_or_none(validated, "cwd"),
        health_url=str_or_none(validated, "health_url"),
        start_timeout=float_value(validated["start_timeout"]),
    )


# The names a profile uses for "the Python that runs herd": a server started from a venv (make
# serve) often has a PATH without that venv, where a bare python3 lacks herd and the app's deps.
_HERD_PYTHON_NAMES = frozenset({"python", "python3", "{python}"})


def resolve_command(command: str) -> str:
    """The executable to spawn: a bare ``python``/``python3`` (or ``{python}``) is herd's own.

    Every other command is returned as given (looked up on ``PATH`` when it has no slash);
    ``/usr/bin/python3`` names the system interpreter explicitly.
    """
    if command in _HERD_PYTHON_NAMES and sys.executable:
        return sys.executable
    return command


def expand(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}``, ``{index}``, ``{node_id}``, ``{cluster_id}``, ``{port}``."""
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def health_url_from(ref: ResourceRef) -> str | None:
    """The profile's health URL expanded from node data (for nodes re-attached by discover)."""
    template = ref.properties.get("health_url")
    if not isinstance(template, str) or ref.data.get("port") is None:
        return None
    values = {"node_id": ref.node_id}
    for key in ("name", "index", "cluster_id", "port"):
        value = ref.data.get(key)
        values[key] = "" if value is None else str(value)
    return expand(template, values)
