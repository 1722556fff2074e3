"""Bodies of ``POST /v1/clusters/<id>/ops`` and ``POST /v1/nodes/<id>/ops`` (1.4).

Both bodies are ``{"<operation>": {...}}``. For a node the inner map is the
operation's parameters. For a cluster Senlin reads ``{"params": {...}, "filters":
{...}}``; openstacksdk and python-senlinclient send the parameters directly, so an
inner map with other keys is taken as the parameters (docs/api.md).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from herd.api.schemas.base import JsonMap, RequestModel
from herd.api.schemas.documented import ONE_KEY


class ClusterOperation(RequestModel):
    """The inner map of a cluster operation, in Senlin's form."""

    params: JsonMap = None
    filters: JsonMap = Field(
        default=None, description="Member filters: name, profile_id, status, role."
    )


class NodeOperationRequest(RequestModel):
    """``{"<operation>": {<params>}}``: exactly one key, an operation of the node's profile type.

    The fields are the operations of herd's built-in types, for the OpenAPI document;
    other drivers may have others, so the body is checked against the node's type.
    """

    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra=ONE_KEY)

    reboot: JsonMap = None
    stop: JsonMap = None
    start: JsonMap = None
    signal: JsonMap = Field(default=None, description='{"signal": "SIGHUP"}')
    pause: JsonMap = None
    unpause: JsonMap = None


class ClusterOperationRequest(RequestModel):
    """``{"<operation>": {"params": {...}, "filters": {...}}}`` (one key)."""

    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra=ONE_KEY)

    reboot: ClusterOperation | None = None
    stop: ClusterOperation | None = None
    start: ClusterOperation | None = None
    signal: ClusterOperation | None = None
    pause: ClusterOperation | None = None
    unpause: ClusterOperation | None = None
