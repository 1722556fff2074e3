"""The rows behind a resource type (``ResourceType``: cluster, node, profile, policy).

Tombstones and purges name their resource by type and id; this is the one map
from that name to its table.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from herd.store.models import ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.types import ResourceType

#: a row of one of the resource tables
ResourceRow = ClusterRow | NodeRow | ProfileRow | PolicyRow

ROW_TYPES: dict[ResourceType, type[ResourceRow]] = {
    ResourceType.CLUSTER: ClusterRow,
    ResourceType.NODE: NodeRow,
    ResourceType.PROFILE: ProfileRow,
    ResourceType.POLICY: PolicyRow,
}


def get(session: Session, resource_type: ResourceType, resource_id: str) -> ResourceRow | None:
    """The row of ``resource_id``, or None when it is gone or the type is not a resource."""
    model = ROW_TYPES.get(resource_type)
    row = session.get(model, resource_id) if model is not None else None
    return row if isinstance(row, ClusterRow | NodeRow | ProfileRow | PolicyRow) else None


def remove(session: Session, row: ResourceRow) -> None:
    session.delete(row)
