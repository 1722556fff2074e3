"""Body of ``PATCH /v1/clusters/<cluster>/nodes/<node>`` (Heat's mark unhealthy), Heat's texts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from herd.api.schemas.base import RequestModel, fail

MAX_REASON = 4096


def _heat_bool(value: object, info: ValidationInfo) -> bool:
    # Heat accepts only the words true and false (any case), not Senlin's wider set.
    text = str(value).lower() if isinstance(value, bool | str) else None
    if text not in ("true", "false"):
        raise fail(
            f'Unrecognized value "{value}" for "mark_unhealthy", '
            "acceptable values are: true, false."
        )
    return text == "true"


def _reason(value: object, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(f"The value for {info.field_name} must be a string.")
    if len(value) > MAX_REASON:
        raise fail(f"The value for {info.field_name} must be at most {MAX_REASON} characters.")
    return value


class MarkUnhealthy(RequestModel):
    """``{"mark_unhealthy": true|false, "resource_status_reason": "..."}``."""

    mark_unhealthy: Annotated[bool, BeforeValidator(_heat_bool)]
    resource_status_reason: Annotated[str | None, BeforeValidator(_reason)] = None

    @classmethod
    def extra_keys_message(cls, keys: Sequence[str]) -> str:
        return "Invalid keys in resource mark unhealthy {" + ", ".join(map(repr, keys)) + "}"

    @classmethod
    def missing_key_message(cls, key: str) -> str:
        return f"Missing mandatory ({key}) key from mark unhealthy request"

    @classmethod
    def not_a_map_message(cls, label: str | None) -> str:
        return "The request body must be a JSON object with a 'mark_unhealthy' key."
