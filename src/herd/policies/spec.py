"""Policy spec parsing and a small typed property schema, with Senlin's texts.

Every problem raises :class:`herd.errors.InvalidSpec` whose ``field`` is the
dotted path of the offending key (``properties.hooks.timeout``,
``properties.zones[1].name``). Senlin raised an internal ``ESchema`` here that
its API turned into a 500; herd's API maps InvalidSpec to 400.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeGuard

import yaml

from herd.domain.values import parse_bool
from herd.errors import InvalidSpec
from herd.json_types import JsonObject, JsonValue

_MISSING = object()


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """The top level of a policy spec."""

    type: str
    version: str
    properties: dict[str, object]
    description: str | None = None


def _load_text(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidSpec(f"Failed parsing the spec: {first_line}", field="spec") from None


def normalize_version(value: object) -> str:
    """Render a spec version as text.

    YAML reads ``1.1`` as a float; like Senlin, herd goes through ``str()``.
    A bare ``1`` becomes ``"1.0"`` (Senlin would have looked for version "1").
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value}.0"
    return str(value).strip()


def parse_spec(spec: Mapping[str, object] | str | bytes) -> PolicySpec:
    """Check the top level of a policy spec given as a map or as YAML/JSON text.

    Raises:
        InvalidSpec: "The provided spec is not a map.", "The 'type' key is missing
            from the provided spec map.", "The 'version' key is missing from the
            provided spec map.", "Required spec item 'properties' not provided",
            "Unrecognizable spec item '<k>'" and the like.
    """
    loaded: object = spec
    if isinstance(spec, bytes):
        loaded = _load_text(spec.decode("utf-8", errors="replace"))
    elif isinstance(spec, str):
        loaded = _load_text(spec)
    if not isinstance(loaded, Mapping):
        raise InvalidSpec("The provided spec is not a map.", field="spec")
    if "type" not in loaded:
        raise InvalidSpec("The 'type' key is missing from the provided spec map.", field="type")
    if "version" not in loaded:
        raise InvalidSpec(
            "The 'version' key is missing from the provided spec map.", field="version"
        )
    for key in loaded:
        if key not in ("type", "version", "properties", "description"):
            raise InvalidSpec(f"Unrecognizable spec item '{key}'", field=str(key))
    if loaded.get("properties") is None:
        raise InvalidSpec("Required spec item 'properties' not provided", field="properties")
    properties = loaded["properties"]
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    if not isinstance(loaded["type"], str) or not loaded["type"].strip():
        raise InvalidSpec(f"The value '{loaded['type']}' is not a valid string.", field="type")
    description = loaded.get("description")
    return PolicySpec(
        type=loaded["type"].strip(),
        version=normalize_version(loaded["version"]),
        properties=dict(properties),
        description=None if description is None else str(description),
    )


def _is_number(value: object) -> TypeGuard[float]:
    # Only numeric fields carry bounds; a bool is no number here
    return isinstance(value, int | float) and not isinstance(value, bool)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@dataclass(frozen=True)
class Field:
    """One typed property. Subclasses convert and check a value."""

    default: JsonValue = None
    required: bool = False
    allowed: tuple[JsonValue, ...] = ()
    min_value: float | None = None
    max_value: float | None = None

    def resolve(self, value: object, path: str) -> object:
        """Return the checked value (the default when ``value`` is missing)."""
        if value is _MISSING or value is None:
            if self.required and value is _MISSING:
                key = path.rsplit(".", 1)[-1]
                raise InvalidSpec(f"Required spec item '{key}' not provided", field=path)
            return self.fill_default(path)
        result = self.convert(value, path)
        if self.allowed and result not in self.allowed:
            choices = ", ".join(str(a) for a in self.allowed)
            raise InvalidSpec(f"'{value}' must be one of the allowed values: {choices}", field=path)
        if self.min_value is not None and _is_number(result) and result < self.min_value:
            key = path.rsplit(".", 1)[-1]
            raise InvalidSpec(
                f"The value '{value}' of '{key}' must be greater than or equal to "
                f"{self.min_value:g}.",
                field=path,
            )
        if self.max_value is not None and _is_number(result) and result > self.max_value:
            key = path.rsplit(".", 1)[-1]
            raise InvalidSpec(
                f"The value '{value}' of '{key}' must be less than or equal to {self.max_value:g}.",
                field=path,
            )
        return result

    def fill_default(self, path: str) -> object:
        return self.default

    def convert(self, value: object, path: str) -> object:
        return value


@dataclass(frozen=True)
class String(Field):
    def convert(self, value: object, path: str) -> object:
        if not isinstance(value, str):
            raise InvalidSpec(f"The value '{value}' is not a valid string.", field=path)
        return value


@dataclass(frozen=True)
class Integer(Field):
    def convert(self, value: object, path: str) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise InvalidSpec(f"The value '{value}' is not a valid Integer", field=path)


@dataclass(frozen=True)
class Number(Field):
    def convert(self, value: object, path: str) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidSpec(f"The value '{value}' is not a valid number.", field=path)
            return value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                pass
            else:
                # "NaN" and "inf" parse as floats but are no numbers a policy can use.
                if math.isfinite(number):
                    return int(number) if number.is_integer() else number
        raise InvalidSpec(f"The value '{value}' is not a valid number.", field=path)


@dataclass(frozen=True)
class Boolean(Field):
    """oslo's strict ``bool_from_string``: true/false, yes/no, on/off, 1/0, t/f, y/n."""

    def convert(self, value: object, path: str) -> object:
        parsed = parse_bool(value)
        if parsed is None:
            raise InvalidSpec(f"The value '{value}' is not a valid Boolean", field=path)
        return parsed


@dataclass(frozen=True)
class Map(Field):
    """A map; with ``schema`` its keys are checked and defaults filled in."""

    schema: Mapping[str, Field] | None = None

    def fill_default(self, path: str) -> object:
        if isinstance(self.default, dict):
            return dict(self.default)
        if self.schema is None:
            return {}
        return self.convert({}, path)

    def convert(self, value: object, path: str) -> object:
        if not isinstance(value, Mapping):
            raise InvalidSpec(f"'{value}' is not a Map", field=path)
        if self.schema is None:
            return dict(value)
        for key in value:
            if key not in self.schema:
                raise InvalidSpec(f"Unrecognizable spec item '{key}'", field=_join(path, str(key)))
        return {
            key: item.resolve(value.get(key, _MISSING), _join(path, key))
            for key, item in self.schema.items()
        }


@dataclass(frozen=True)
class List(Field):
    """A list whose items all follow ``item``."""

    item: Field = field(default_factory=Field)

    def fill_default(self, path: str) -> object:
        return list(self.default) if isinstance(self.default, list) else []

    def convert(self, value: object, path: str) -> object:
        if not isinstance(value, list | tuple):
            raise InvalidSpec(f"'{value}' is not a List", field=path)
        return [self.item.resolve(v, f"{path}[{i}]") for i, v in enumerate(value)]


def validate_properties(
    schema: Mapping[str, Field], properties: Mapping[str, object]
) -> dict[str, object]:
    """Check ``properties`` against ``schema`` and fill in the defaults.

    Raises:
        InvalidSpec: Naming the dotted path (``properties.<key>...``) and the reason.
    """
    result = Map(schema=schema).resolve(properties, "properties")
    assert isinstance(result, dict)  # Map with a schema always builds a dict
    return result


_TYPE_NAMES = {
    "String": "String",
    "Integer": "Integer",
    "Number": "Number",
    "Boolean": "Boolean",
    "Map": "Map",
    "List": "List",
}


def describe_field(item: Field) -> JsonObject:
    """One property as Senlin's ``GET /v1/policy-types/<type>`` shows it."""
    described: JsonObject = {
        "type": _TYPE_NAMES.get(type(item).__name__, "String"),
        "required": item.required,
        "updatable": False,
    }
    if item.default is not None:
        described["default"] = item.default
    if item.allowed:
        described["constraints"] = [{"type": "AllowedValues", "constraint": list(item.allowed)}]
    if isinstance(item, Map) and item.schema is not None:
        described["schema"] = describe_schema(item.schema)
    if isinstance(item, List):
        described["schema"] = {"*": describe_field(item.item)}
    return described


def describe_schema(schema: Mapping[str, Field]) -> JsonObject:
    """A policy type's property schema in Senlin's format (name -> type, required, ...)."""
    return {key: describe_field(item) for key, item in schema.items()}
