"""List filters that name a resource: a name or short id is resolved to its full id first.

Senlin resolves ``GET /v1/events?cluster_id=`` this way (an id, a name or a short id of a
cluster); herd does the same for the other filters that name a cluster or a node
(``GET /v1/actions?cluster_id=`` and ``?target=``, ``GET /v1/receivers?cluster_id=``), so
the ids and names its tables print work as filters. A value that names nothing visible is
kept as given: a deleted cluster's full id still finds its events and actions (Senlin
answered an empty list).
"""

from __future__ import annotations

from collections.abc import Sequence

from herd.api.pagination import ListParams
from herd.errors import NotFound
from herd.store.database import Session
from herd.store.lookup import Scope, find
from herd.store.models import ClusterRow, NodeRow

#: the kinds of row a filter may name, each with its name in Senlin's texts
Kinds = Sequence[tuple[type[ClusterRow] | type[NodeRow], str]]

CLUSTERS: Kinds = ((ClusterRow, "cluster"),)
CLUSTERS_AND_NODES: Kinds = ((ClusterRow, "cluster"), (NodeRow, "node"))


def _resolve(session: Session, value: str, kinds: Kinds, scope: Scope) -> str:
    for model, kind in kinds:
        try:
            return str(find(session, model, value, scope, kind).id)
        except NotFound:
            continue
    return value


def resolve_filters(
    session: Session,
    params: ListParams,
    scope: Scope,
    filters: dict[str, Kinds],
) -> None:
    """Replace each value of the named ``filters`` in ``params`` by the full id it names.

    Raises:
        MultipleChoices: a name or short id matches more than one resource (as Senlin).
    """
    for name, kinds in filters.items():
        values = params.filters.get(name)
        if values:
            params.filters[name] = [_resolve(session, str(v), kinds, scope) for v in values]
