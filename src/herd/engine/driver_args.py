"""What a driver is told about a node: its ``ResourceRef`` and its ``NodeRequest``, built here.

Every engine path that calls a driver about a node (a child action, a recovery, an operation,
a rolling update, the health manager's watches and probes, a start-up's orphan clean-up)
turns the node's row and its profile's validated properties into these two values with the
functions below, so what a driver sees of a node (a copy of its data, its placement, its
metadata) is decided once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from herd.drivers.base import NodeRequest, ResourceRef


class NodeForDriver(Protocol):
    """The node columns a driver's arguments are made of (a row, ``NodeFacts``, a Core row)."""

    @property
    def id(self) -> str: ...
    @property
    def physical_id(self) -> str | None: ...
    @property
    def data(self) -> Mapping[str, Any] | None: ...


class NodeForRequest(NodeForDriver, Protocol):
    @property
    def name(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def cluster_id(self) -> str | None: ...
    @property
    def meta_data(self) -> Mapping[str, Any] | None: ...


def ref_of(
    node_id: str,
    physical_id: str | None,
    data: Mapping[str, Any] | None,
    properties: Mapping[str, Any],
) -> ResourceRef:
    """The resource of a node known by its parts (a probe target, a discovered orphan).

    The data is copied: a driver may keep the ref while the row changes.
    """
    return ResourceRef(node_id, physical_id, dict(data or {}), properties)


def resource_ref(node: NodeForDriver, properties: Mapping[str, Any]) -> ResourceRef:
    """The node's resource, described with the properties of a profile (validated)."""
    return ref_of(node.id, node.physical_id, node.data, properties)


def node_request(node: NodeForRequest, properties: Mapping[str, Any]) -> NodeRequest:
    """What a driver needs to create (or re-create) this node's resource."""
    return NodeRequest(
        node_id=node.id,
        name=node.name,
        index=node.index,
        cluster_id=node.cluster_id,
        properties=properties,
        placement=dict((node.data or {}).get("placement") or {}),
        metadata=dict(node.meta_data or {}),
    )
