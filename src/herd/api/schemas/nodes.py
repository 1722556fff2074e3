"""``POST /v1/nodes/adopt-preview`` and ``/v1/nodes/adopt`` (1.7), Senlin's fields."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool, StrictStr

from herd.api.schemas.parsing import RequestModel


class NodeAdoptPreview(RequestModel):
    identity: StrictStr = Field(min_length=1)
    type: StrictStr = Field(min_length=1)
    overrides: dict[str, Any] | None = None
    snapshot: StrictBool | None = False


class NodeAdopt(NodeAdoptPreview):
    name: StrictStr | None = Field(default=None, max_length=255)
    role: StrictStr | None = Field(default=None, max_length=64)
    metadata: dict[str, Any] | None = None
