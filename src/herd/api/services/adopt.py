"""Node adopt and adopt-preview (1.7): make a resource herd did not create a node.

As Senlin: a preview describes the resource as a profile spec and stores nothing;
an adopt stores that profile (``prof-<node name>``) and an ACTIVE orphan node in
one transaction, synchronously (no action). The driver reads the resource: a
process on this host for ``herd.process``, a server of the simulated cloud for
``herd.sim``.
"""

from __future__ import annotations

import uuid

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import require
from herd.api.schemas.nodes import NodeAdopt, NodeAdoptPreview
from herd.api.services.spec_resources import sync_event
from herd.drivers.adoption import AdoptedResource, AdoptionDriver
from herd.errors import Conflict, InvalidRequest
from herd.store import nodes as node_store
from herd.store import profiles
from herd.store.database import Session
from herd.store.events import record
from herd.store.models import NodeRow, ProfileRow
from herd.store.spec_rows import new_spec_row
from herd.types import NodeStatus, ResourceType


def _preview(
    services: Services, request: NodeAdoptPreview
) -> tuple[str, AdoptionDriver, AdoptedResource]:
    full_type = services.drivers.full_name(request.type)
    driver = services.drivers.get(full_type)
    if not isinstance(driver, AdoptionDriver):
        raise InvalidRequest(
            f"The profile type '{full_type}' does not support adopting nodes.", field="type"
        )
    resource = driver.adopt_preview(request.identity, request.overrides, bool(request.snapshot))
    return full_type, driver, resource


def _spec(full_type: str, resource: AdoptedResource) -> dict[str, object]:
    type_name, _, version = full_type.rpartition("-")
    return {"type": type_name, "version": version, "properties": resource.properties}


def adopt_preview(
    services: Services, ctx: RequestContext, request: NodeAdoptPreview
) -> dict[str, object]:
    """The profile spec the adopted node would get (Senlin's ``node_preview``)."""
    require(ctx.version, "1.7")
    full_type, _driver, resource = _preview(services, request)
    return {"node_preview": _spec(full_type, resource)}


def adopt_node(
    session: Session, services: Services, ctx: RequestContext, request: NodeAdopt
) -> NodeRow:
    """Store the generated profile and an ACTIVE orphan node for the resource."""
    require(ctx.version, "1.7")
    full_type, driver, resource = _preview(services, request)
    taken = node_store.managing(session, resource.physical_id, full_type)
    if taken is not None:
        raise Conflict(
            f"The resource '{resource.physical_id}' is already managed by node '{taken.id}'."
        )
    now = services.now()
    name = request.name or f"node-{uuid.uuid4().hex[:8]}"
    profile = new_spec_row(
        ProfileRow,
        stored=True,
        name=f"prof-{name}",
        type_name=full_type,
        spec=_spec(full_type, resource),
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=now,
        meta_data={},
    )
    profiles.add(session, profile)
    sync_event(session, services, ctx, ResourceType.PROFILE, profile, "PROFILE_CREATE")
    node = node_store.add_new(
        session,
        name=name,
        profile_id=profile.id,
        physical_id=resource.physical_id,
        data=resource.data,
        status=NodeStatus.ACTIVE,
        status_reason="Node adopted successfully",
        role=request.role or "",
        metadata=request.metadata or {},
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=now,
    )
    session.flush()
    record(
        session,
        otype="NODE",
        oid=node.id,
        oname=node.name,
        project=node.project,
        user=ctx.user,
        action="NODE_ADOPT",
        status=NodeStatus.ACTIVE,
        reason=f"Node adopted successfully: {full_type} resource {resource.physical_id}.",
        now=now,
    )
    # Last, so that a refused claim (the resource was taken meanwhile) rolls everything back.
    driver.claim(resource, node.id)
    return node
