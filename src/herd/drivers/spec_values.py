"""Senlin's schema types for the properties of OpenStack profile types, as pure checks.

Senlin's ``schema.String``, ``Boolean``, ``Integer``, ``Map`` and ``List`` with their error
texts (``The value 'x' is not a valid Boolean``, ``'x' is not a Map``...), each prefixed with
the dotted key (``properties.<path>``) as herd's drivers report it. Shared by the
``os.nova.server`` and ``os.heat.stack`` specs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from herd.errors import InvalidSpec


def fail(path: str, reason: str) -> InvalidSpec:
    """An InvalidSpec naming ``properties.<path>`` (the field herd's API reports)."""
    return InvalidSpec(f"properties.{path}: {reason}", field=f"properties.{path}")


def string(path: str, value: object) -> str:
    """Senlin's String: scalars become text (YAML reads ``flavor: 1`` as an integer)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise fail(path, f"The value '{value}' is not a valid string.")
    return str(value)


def optional_string(path: str, value: object) -> str | None:
    return None if value is None else string(path, value)


def boolean(path: str, value: object) -> bool:
    """Senlin's Boolean (``strutils.bool_from_string(strict=True)``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "t", "true", "on", "y", "yes"):
        return True
    if text in ("0", "f", "false", "off", "n", "no"):
        return False
    raise fail(path, f"The value '{value}' is not a valid Boolean")


def integer(path: str, value: object) -> int:
    """Senlin's Integer: an int, or text that is one."""
    if isinstance(value, bool):
        raise fail(path, f"The value '{value}' is not a valid Integer")
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        raise fail(path, f"The value '{value}' is not a valid Integer") from None


def mapping(path: str, value: object) -> Mapping[str, object]:
    """Senlin's Map."""
    if not isinstance(value, Mapping):
        raise fail(path, f"'{value}' is not a Map")
    return value


def sequence(path: str, value: object) -> Sequence[object]:
    """Senlin's List (a string is not one)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise fail(path, f"'{value!s}' is not a List")
    return value


def known(path: str, value: Mapping[str, object], keys: Sequence[str] | frozenset[str]) -> None:
    """Refuse a key Senlin's schema did not have, with its text."""
    for key in value:
        if key not in keys:
            raise fail(f"{path}.{key}" if path else str(key), f"Unrecognizable spec item '{key}'")


#: the keys of Senlin's RequestContext, which its profiles' ``context`` accepted
SENLIN_CONTEXT_KEYS = frozenset(
    {
        "auth_token",
        "user_id",
        "project_id",
        "domain_id",
        "user_domain_id",
        "project_domain_id",
        "is_admin",
        "read_only",
        "show_deleted",
        "request_id",
        "auth_url",
        "trusts",
        "user_name",
        "project_name",
        "domain_name",
        "user_domain_name",
        "project_domain_name",
        "auth_token_info",
        "region_name",
        "roles",
        "password",
        "api_version",
    }
)


def region_context(value: object, cloud_setting: str) -> dict[str, object]:
    """A profile's ``context``: Senlin's keys are known, only ``region_name`` is honoured.

    ``cloud_setting`` names the setting that does choose the cloud (for the message).
    """
    given = mapping("context", value)
    bad = [str(key) for key in given if key not in SENLIN_CONTEXT_KEYS]
    if bad:
        raise fail("context", f"Some keys in 'context' are invalid: {bad}")
    for key in given:
        if key != "region_name":
            # Senlin used these to talk to the cloud with other credentials (through a
            # trust). herd talks to the cloud its operator configured, and a credential in
            # a profile would be stored and shown in every answer about the profile.
            raise fail(
                f"context.{key}",
                f"herd does not honour '{key}' in a profile's context: it talks to the "
                f"cloud its operator configured ({cloud_setting} or the OS_* variables); "
                "only 'region_name' is honoured",
            )
    region = optional_string("context.region_name", given.get("region_name"))
    return {"region_name": region} if region else {}
