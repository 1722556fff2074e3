"""Profile operations (1.4): ``POST /v1/nodes/<id>/ops`` and ``POST /v1/clusters/<id>/ops``.

The operation and its parameters are checked against the profile type's
operations (unknown ones and bad parameters are 400 naming them) before a
NODE_OPERATION or CLUSTER_OPERATION action is stored; the engine runs it under
the node's or the cluster's lock.
"""

from __future__ import annotations

from collections.abc import Mapping

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import require
from herd.api.schemas.base import parse_body
from herd.api.schemas.operations import ClusterOperation
from herd.api.services import deletions
from herd.api.services.common import submit
from herd.drivers.operations import validate_operation
from herd.errors import InvalidRequest
from herd.store import clusters, profiles
from herd.store.clusters import MEMBER_FILTERS
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow, NodeRow
from herd.types import ActionName, ResourceType

SENLIN_FORM_KEYS = frozenset({"params", "filters"})


def _single(body: object, stop: str) -> tuple[str, object]:
    """The one ``{"<operation>": ...}`` key, with Senlin's texts.

    Senlin ends these texts with a period for nodes and without one for clusters.
    """
    if body is None or (isinstance(body, Mapping) and not body):
        raise InvalidRequest(f"No operation specified{stop}")
    if not isinstance(body, Mapping):
        raise InvalidRequest("The data provided is not a map")
    if len(body) > 1:
        raise InvalidRequest(f"Multiple operations specified{stop}")
    name, inner = next(iter(body.items()))
    return str(name), inner


def _validated(
    session: Session, services: Services, profile_id: str, operation: str, params: object
) -> dict[str, object]:
    profile = profiles.get(session, profile_id)
    if profile is None:
        raise InvalidRequest(f"The specified profile '{profile_id}' could not be found.")
    driver = services.drivers.get(profile.type)
    return validate_operation(
        profile.type,
        getattr(driver, "operations_schema", {}),
        operation,
        params,
        allow_uncatchable=services.settings.allow_uncatchable_signals,
    )


def node_operation(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow:
    require(ctx.version, "1.4")
    operation, params = _single(body, ".")
    node = find(session, NodeRow, identity, ctx.scope(), "node")
    deletions.hide_from_agent(session, ctx, ResourceType.NODE, node)
    checked = _validated(session, services, node.profile_id, operation, params)
    row = submit(
        session,
        services,
        ctx,
        ActionName.NODE_OPERATION,
        target=node.id,
        cluster_id=node.cluster_id,
        project=node.project,
        inputs={"operation": operation, "params": checked},
    )
    row.name = f"node_{operation}_{node.id[:8]}"
    return row


def _member_ids(session: Session, cluster: ClusterRow, filters: Mapping[str, object]) -> list[str]:
    errors = [f"Filter key '{key}' is unsupported" for key in filters if key not in MEMBER_FILTERS]
    if errors:
        raise InvalidRequest("\n".join(errors), field="filters")
    wanted = {
        key: [str(v) for v in (value if isinstance(value, list) else [value])]
        for key, value in filters.items()
    }
    return clusters.member_ids(session, cluster.id, wanted)


def cluster_operation(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow:
    require(ctx.version, "1.4")
    operation, inner = _single(body, "")
    if isinstance(inner, Mapping) and set(inner) <= SENLIN_FORM_KEYS:
        request = parse_body(ClusterOperation, inner, label=operation)
        params: object = request.params or {}
        filters = request.filters or {}
    else:
        # openstacksdk and python-senlinclient send the parameters themselves.
        params, filters = inner, {}
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
    checked = _validated(session, services, cluster.profile_id, operation, params)
    node_ids = _member_ids(session, cluster, filters)
    if not node_ids:
        raise InvalidRequest("No node (matching the filter) could be found", field="filters")
    row = submit(
        session,
        services,
        ctx,
        ActionName.CLUSTER_OPERATION,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        inputs={"operation": operation, "params": checked, "nodes": node_ids},
        timeout=cluster.timeout,
    )
    row.name = f"cluster_{operation}_{cluster.id[:8]}"
    return row
