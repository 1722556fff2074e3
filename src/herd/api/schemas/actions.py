"""Body of ``PATCH /v1/actions/<id>`` (1.12)."""

from __future__ import annotations

from pydantic import Field

from herd.api.schemas.base import Identity, RequestModel
from herd.types import ActionStatus


class ActionUpdate(RequestModel):
    """``{"action": {"status": "CANCELLED"}}``: the one change Senlin allows (the service
    refuses any other status with Senlin's text, naming the action)."""

    status: Identity = Field(json_schema_extra={"enum": [ActionStatus.CANCELLED.value]})
