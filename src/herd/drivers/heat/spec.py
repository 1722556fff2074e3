"""The ``os.heat.stack`` 1.0 profile properties (Senlin's spec): schema and pure validation.

Senlin's ``StackProfile`` keys, defaults and texts: ``template`` and ``template_url`` (one of
them is needed: "Both template and template_url are not specified"), ``parameters``,
``files``, ``environment`` (Maps, default ``{}``), ``timeout`` (minutes, unset by default),
``disable_rollback`` (default True) and ``context``. Whether Heat accepts the template is
asked of Heat (:mod:`herd.drivers.heat.driver`), not decided here.
"""

from __future__ import annotations

from collections.abc import Mapping

from herd.drivers.spec_values import (
    boolean,
    fail,
    integer,
    known,
    mapping,
    region_context,
    string,
)
from herd.errors import InvalidSpec

#: keys that a new profile may change on an existing stack (a stack update)
UPDATABLE = (
    "template",
    "template_url",
    "parameters",
    "files",
    "timeout",
    "disable_rollback",
    "environment",
)


def _entry(kind: str, description: str, **extra: object) -> dict[str, object]:
    return {"type": kind, "description": description, **extra}


PROPERTIES_SCHEMA: dict[str, dict[str, object]] = {
    "context": _entry(
        "Map",
        "A dictionary for specifying the customized context for stack operations: herd "
        "honours 'region_name'.",
        default={},
    ),
    "template": _entry("Map", "Heat stack template.", default={}, updatable=True),
    "template_url": _entry("String", "Heat stack template url.", default="", updatable=True),
    "parameters": _entry(
        "Map", "Parameters to be passed to Heat for stack operations.", default={}, updatable=True
    ),
    "files": _entry(
        "Map", "Contents of files referenced by the template, if any.", default={}, updatable=True
    ),
    "timeout": _entry(
        "Integer",
        "A integer that specifies the number of minutes that a stack operation times out.",
        updatable=True,
    ),
    "disable_rollback": _entry(
        "Boolean",
        "A boolean specifying whether a stack operation can be rolled back.",
        default=True,
        updatable=True,
    ),
    "environment": _entry(
        "Map",
        "A map that specifies the environment used for stack operations.",
        default={},
        updatable=True,
    ),
}


def _plain_map(path: str, value: object) -> dict[str, object]:
    return {str(key): item for key, item in mapping(path, value).items()}


def validate_stack_properties(properties: object) -> dict[str, object]:
    """Check an ``os.heat.stack`` spec's properties; return them with Senlin's defaults.

    Raises:
        InvalidSpec: a key is unknown, a value has the wrong type, a timeout is not
            positive, or neither ``template`` nor ``template_url`` is given; the
            message starts with the dotted key (``properties.timeout``).
    """
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    known("", properties, frozenset(PROPERTIES_SCHEMA))
    given = {str(key): value for key, value in properties.items() if value is not None}
    timeout = None if given.get("timeout") is None else integer("timeout", given["timeout"])
    if timeout is not None and timeout <= 0:
        # Heat refuses it at create ("timeout_mins" must be positive); say so now
        raise fail("timeout", f"The timeout must be a positive number of minutes, not {timeout}")
    result: dict[str, object] = {
        "context": region_context(given["context"], "HERD_HEAT_CLOUD")
        if "context" in given
        else {},
        "template": _plain_map("template", given.get("template", {})),
        "template_url": string("template_url", given.get("template_url", "")),
        "parameters": _plain_map("parameters", given.get("parameters", {})),
        "files": _plain_map("files", given.get("files", {})),
        "timeout": timeout,
        "disable_rollback": boolean("disable_rollback", given.get("disable_rollback", True)),
        "environment": _plain_map("environment", given.get("environment", {})),
    }
    if not result["template"] and not result["template_url"]:
        raise fail("template", "Both template and template_url are not specified")
    return result
