"""The fail-fast checks, references to tombstoned resources, and action submission."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.errors import ActionConflict, InvalidRequest, NotFound, ResourceDeleting, ResourceLocked
from herd.store import actions as action_store
from herd.store import profiles, tombstones
from herd.store.actions import active_actions_on, new_action
from herd.store.database import Session
from herd.store.locks import cluster_lock_holders, node_lock_holder
from herd.store.lookup import Scope, find
from herd.store.models import ActionRow, ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.types import ActionName, ActionStatus, ResourceType

#: actions stored whatever locks and tombstones say (a delete, or a purge of a stuck one)
LOCK_BYPASS = frozenset(
    {ActionName.CLUSTER_DELETE, ActionName.NODE_DELETE, ActionName.DELETION_PURGE}
)


def reject_unknown(data: Mapping[str, object], allowed: Iterable[str]) -> None:
    extra = sorted(set(data) - set(allowed))
    if extra:
        names = ", ".join(f"'{name}'" for name in extra)
        verb = "was" if len(extra) == 1 else "were"
        raise InvalidRequest(
            f"Additional properties are not allowed ({names} {verb} unexpected)", field=extra[0]
        )


#: the rows a request body may name
Referenced = TypeVar("Referenced", ClusterRow, NodeRow, ProfileRow, PolicyRow)


def find_referenced(
    session: Session, model: type[Referenced], identity: object, scope: Scope, kind: ResourceType
) -> Referenced:
    """Find a resource named inside a request body: unknown ones are 400, as Senlin."""
    if not isinstance(identity, str) or not identity:
        raise InvalidRequest(f"The specified {kind} '{identity}' could not be found.", field=kind)
    try:
        row = find(session, model, identity, scope, kind)
    except NotFound:
        raise InvalidRequest(
            f"The specified {kind} '{identity}' could not be found.", field=f"{kind}_id"
        ) from None
    refuse_if_deleting(session, kind, [row.id])
    return row


def changed_inputs(
    requested: Mapping[str, object], current: Mapping[str, object]
) -> dict[str, object]:
    """The requested values that are given (not None) and differ from the current ones."""
    return {
        name: value
        for name, value in requested.items()
        if value is not None and value != current[name]
    }


def profile_change(
    session: Session, project: str, current_id: str, requested: object, owner: ResourceType
) -> str | None:
    """The profile an update of a cluster or node asks for; None when it is the current one.

    The profile is looked up in ``project``, the updated resource's own, whoever asks.
    A profile of another type is refused (Senlin's text).
    """
    profile = find_referenced(session, ProfileRow, requested, Scope(project), ResourceType.PROFILE)
    if profile.id == current_id:
        return None
    current = profiles.get(session, current_id)
    if current is not None and current.type != profile.type:
        raise InvalidRequest(
            f"Cannot update a {owner} to a different profile type, operation aborted.",
            field="profile_id",
        )
    return str(profile.id)


def refuse_if_deleting(session: Session, kind: ResourceType, ids: Iterable[str | None]) -> None:
    """Creating or changing anything that refers to a tombstoned resource is a 409."""
    found = tombstones.tombstoned(session, kind, [i for i in ids if i])
    if found:
        first = sorted(found)[0]
        raise ResourceDeleting(
            f"The {kind} '{first}' is being deleted: it cannot be used or changed.",
            resource_type=kind,
            resource_id=first,
        )


def _referenced_ids(inputs: Mapping[str, object]) -> dict[ResourceType, list[str]]:
    """Resources an action's inputs name (policy to attach, nodes to add or swap, profile)."""
    nodes: list[str] = []
    for key in ("nodes", "candidates"):
        value = inputs.get(key)
        if isinstance(value, Mapping):
            nodes += [str(k) for k in value] + [str(v) for v in value.values()]
        elif isinstance(value, list | tuple):
            nodes += [str(v) for v in value]
    policy = inputs.get("policy_id")
    profile = inputs.get("profile_id")
    return {
        ResourceType.NODE: nodes,
        ResourceType.POLICY: [str(policy)] if policy else [],
        ResourceType.PROFILE: [str(profile)] if profile else [],
    }


def check_fail_fast(session: Session, action: ActionName, target: str, dead_before: float) -> None:
    """Senlin's fail-fast checks: a locked target or a conflicting active action is 409."""
    if action in LOCK_BYPASS:
        return
    if action.is_cluster_action:
        locked = bool(cluster_lock_holders(session, target, dead_before))
        kind = ResourceType.CLUSTER
    else:
        locked = node_lock_holder(session, target, dead_before) is not None
        kind = ResourceType.NODE
    if locked:
        raise ResourceLocked(
            f"{action.value} for {kind} '{target}' cannot be completed because it is "
            "already locked."
        )
    active = active_actions_on(session, target)
    if active:
        ids = ",".join(row.id for row in active)
        raise ActionConflict(
            f"The {action.value} action for target {target} conflicts with the following "
            f"action(s): {ids}"
        )


def submit(
    session: Session,
    services: Services,
    ctx: RequestContext,
    action: ActionName,
    *,
    target: str,
    cluster_id: str | None,
    project: str,
    inputs: dict[str, object] | None = None,
    timeout: int | None = None,
    check: bool = True,
) -> ActionRow:
    """Run the fail-fast checks and add a READY action row for the engine.

    Every action but a delete is refused (409) while its target, its cluster or a
    resource its inputs name is being deleted.
    """
    if action not in LOCK_BYPASS:
        target_kind = ResourceType.CLUSTER if action.is_cluster_action else ResourceType.NODE
        refuse_if_deleting(session, target_kind, [target])
        refuse_if_deleting(session, ResourceType.CLUSTER, [cluster_id])
        for kind, ids in _referenced_ids(inputs or {}).items():
            refuse_if_deleting(session, kind, ids)
    if check:
        check_fail_fast(session, action, target, services.dead_before())
    row = new_action(
        action=action,
        target=target,
        cluster_id=cluster_id,
        project=project,
        user=ctx.user,
        inputs=inputs or {},
        status=ActionStatus.READY,
        timeout=timeout if timeout is not None else services.settings.default_action_timeout,
        now=services.now(),
    )
    action_store.add(session, row)
    if services.engine is not None:
        session.info.setdefault("after_commit", []).append(services.engine.notify)
    return row


def location(action_id: str) -> dict[str, str]:
    return {"Location": f"/v1/actions/{action_id}"}


def single_action(
    body: object, supported: Mapping[str, object], *, stop: str = ""
) -> tuple[str, object]:
    """The one ``{"<action>": {...}}`` key of an actions body, with Senlin's texts.

    No body at all is "No action specified", as an empty map (Senlin reads both as ``{}``);
    Senlin ends these texts with a period for nodes (``stop``) and without for clusters.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidRequest("The data provided is not a map")
    if len(body) < 1:
        raise InvalidRequest(f"No action specified{stop}")
    if len(body) > 1:
        raise InvalidRequest(f"Multiple actions specified{stop}")
    name, params = next(iter(body.items()))
    if name not in supported:
        raise InvalidRequest(f"Unrecognized action '{name}' specified", field=name)
    return name, params
