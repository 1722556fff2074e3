"""``PATCH /v1/actions/<id>`` (1.12)."""

from __future__ import annotations

from pydantic import StrictStr

from herd.api.schemas.parsing import RequestModel


class ActionUpdate(RequestModel):
    """``{"action": {"status": "CANCELLED"}}``; ``force`` comes in the query."""

    status: StrictStr
