"""Parse a request body into a model; pydantic's errors become Senlin's 400 texts.

Interim: the shared ``herd.api.schemas.base`` (``RequestModel``, ``parse_body``)
replaces this module when it lands on main.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from herd.api.services.common import BOOL_ACCEPTED, unwrap
from herd.errors import InvalidRequest

Model = TypeVar("Model", bound=BaseModel)


class RequestModel(BaseModel):
    """A request body: unknown keys are refused, as Senlin's JSON schemas do."""

    model_config = ConfigDict(extra="forbid", strict=False)


def _message(problem: Mapping[str, Any]) -> tuple[str, str]:
    location = [str(part) for part in problem.get("loc", ())]
    field = location[-1] if location else "body"
    value = problem.get("input")
    kind = str(problem.get("type", ""))
    if kind == "extra_forbidden":
        return f"Additional properties are not allowed ('{field}' was unexpected)", field
    if kind == "missing":
        return f"'{field}' is a required property", field
    if kind.startswith("bool"):
        return f"Unrecognized value '{value}', acceptable values are: {BOOL_ACCEPTED}", field
    if kind.startswith("string"):
        return f"The value '{value}' is not a valid string.", field
    if kind.startswith("dict"):
        return f"The value ({value}) is not a valid JSON map for '{field}'.", field
    return f"Invalid value '{value}' for '{field}': {problem.get('msg', 'invalid')}.", field


def parse_body(model: type[Model], raw: Any, *, envelope: str | None = None) -> Model:
    """``raw`` (or its ``envelope`` map) as ``model``; InvalidRequest naming the field."""
    data = unwrap(raw, envelope) if envelope else raw
    if not isinstance(data, Mapping):
        raise InvalidRequest("The data provided is not a map")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        message, field = _message(first)
        raise InvalidRequest(message, field=field) from None
