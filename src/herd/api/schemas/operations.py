"""Bodies of ``POST /v1/clusters/<id>/ops`` and ``POST /v1/nodes/<id>/ops`` (1.4).

Both bodies are ``{"<operation>": {...}}``. For a node the inner map is the
operation's parameters. For a cluster Senlin reads ``{"params": {...}, "filters":
{...}}``; openstacksdk and python-senlinclient send the parameters directly, so an
inner map with other keys is taken as the parameters (docs/api.md).
"""

from __future__ import annotations

from pydantic import Field

from herd.api.schemas.base import JsonMap, RequestModel


class ClusterOperation(RequestModel):
    """The inner map of a cluster operation, in Senlin's form."""

    params: JsonMap = None
    filters: JsonMap = Field(
        default=None, description="Member filters: name, profile_id, status, role."
    )
