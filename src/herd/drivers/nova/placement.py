"""Where a Nova node lives: its region, and the server group it boots into again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herd.drivers.base import CreatedResource, NodeRequest


def region_of(placement: Mapping[str, Any], properties: Mapping[str, Any]) -> str | None:
    """The region a node lives in: its placement (region placement policy), else the
    profile's ``context.region_name``, else the cloud's default (None)."""
    region = placement.get("region_name") or (properties.get("context") or {}).get("region_name")
    return str(region) if region else None


def keep_group(request: NodeRequest, created: CreatedResource) -> CreatedResource:
    """The node's server group stays in its placement: a RECREATE boots into it again."""
    group = request.placement.get("servergroup")
    if group:
        created.data["placement"] = {**created.data["placement"], "servergroup": group}
    return created
