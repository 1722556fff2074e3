"""Body of ``PATCH /v1/actions/<id>`` (1.12)."""

from __future__ import annotations

from herd.api.schemas.base import Identity, RequestModel


class ActionUpdate(RequestModel):
    """``{"action": {"status": "CANCELLED"}}``: the one change Senlin allows."""

    status: Identity
