"""Cluster collect (``GET /v1/clusters/<id>/attrs/<path>``, 1.2): a JSONPath over members.

Senlin parses the path with ``jsonpath_rw`` and answers, for every member whose
node view matches, the first match. ``jsonpath_ng`` reads the same grammar:
``name``, ``metadata.role``, ``$.details.port``, ``data[0]``, ``metadata.*``,
``details..region_name``, ``metadata."a.b"``. Node details (the driver's data) are
included only when the path mentions ``details``, as Senlin does.
"""

from __future__ import annotations

from jsonpath_ng.jsonpath import JSONPath
from jsonpath_ng.parser import parse as parse_jsonpath

from herd.api.auth import RequestContext
from herd.api.microversion import require
from herd.api.services import deletions
from herd.api.views import render_nodes
from herd.errors import InvalidRequest
from herd.store import clusters
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ClusterRow
from herd.types import ResourceType


def _parser(path: str) -> JSONPath:
    try:
        return parse_jsonpath(path)
    except Exception as exc:  # jsonpath_ng raises plain Exception subclasses for bad paths
        raise InvalidRequest(f"Invalid attribute path - {exc}", field="path") from None


def collect(
    session: Session, ctx: RequestContext, identity: str, path: str
) -> list[dict[str, object]]:
    """``[{"id": node id, "value": first match}]`` for the members that match ``path``."""
    require(ctx.version, "1.2")
    stripped = path.strip()
    if stripped in ("", "None"):
        raise InvalidRequest("Required path attribute is missing.", field="path")
    parser = _parser(stripped)
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
    nodes = clusters.members(session, cluster.id)
    views = render_nodes(session, nodes, ctx.version, details="details" in stripped)
    found = []
    for view in views:
        matches = parser.find(view)
        if matches:
            found.append({"id": view["id"], "value": matches[0].value})
    return found
