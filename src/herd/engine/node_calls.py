"""One node child action's driver call: create, delete or recover one node's resource.

:func:`load_targets` reads the nodes and their profiles' validated properties in
two queries; :func:`call_driver` runs on the node pool and never raises: a failed
call is a :class:`FinishedCall` with the reason, which ``node_results`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.engine.context import EngineContext
from herd.engine.driver_args import node_request, resource_ref
from herd.engine.health.recover_node import RecoveryOptions, recover_resource
from herd.engine.node_results import FinishedCall
from herd.engine.unclaimed import MadeFor
from herd.errors import HerdError
from herd.store import nodes as node_store
from herd.store import profiles as profile_store
from herd.store.nodes import NodeFacts
from herd.types import ActionName


@dataclass(frozen=True)
class NodeTarget:
    node: NodeFacts
    profile: tuple[str, dict[str, object]] | str  # (profile type, validated properties) or an error


def made_for(node: NodeFacts, profile_type: str, properties: Mapping[str, object]) -> MadeFor:
    """What destroying the resource made for ``node`` needs, should its row be gone by then."""
    return MadeFor(profile_type, properties, node.name, node.cluster_id)


def load_targets(ctx: EngineContext, node_ids: Sequence[str]) -> dict[str, NodeTarget]:
    """Nodes and their profiles' validated properties, read in two queries (per 5,000 nodes)."""
    if not node_ids:
        return {}
    with ctx.database.read() as session:
        nodes = node_store.facts(session, node_ids)
        profiles = profile_store.get_many(session, {n.profile_id for n in nodes})
    validated: dict[str, tuple[str, dict[str, object]] | str] = {}
    for profile in profiles.values():
        try:
            driver = ctx.drivers.get(profile.type)
            validated[profile.id] = (
                profile.type,
                driver.validate_properties(profile.spec.get("properties", {})),
            )
        except HerdError as exc:
            validated[profile.id] = str(exc)
    return {n.id: NodeTarget(n, validated.get(n.profile_id, "profile is gone")) for n in nodes}


class QuickCalls:
    """Whether a child's driver call is quick (see ``Driver.calls_are_quick``).

    Asked once per verb and profile: looking the driver up for each of 10,000
    children showed in profiles of a scale-out.
    """

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self._known: dict[tuple[ActionName, str], bool] = {}

    def __call__(self, verb: ActionName, target: NodeTarget | None) -> bool:
        if verb is ActionName.NODE_LEAVE:
            return True
        if verb not in (ActionName.NODE_CREATE, ActionName.NODE_DELETE) or target is None:
            return False
        key = (verb, target.node.profile_id)
        if key not in self._known:
            self._known[key] = self._ask(target)
        return self._known[key]

    def _ask(self, target: NodeTarget) -> bool:
        if isinstance(target.profile, str):
            return True  # fails at once without calling a driver
        profile_type, properties = target.profile
        try:
            return self.ctx.drivers.get(profile_type).calls_are_quick(properties)
        except HerdError:
            return False


def call_driver(
    ctx: EngineContext,
    child_id: str,
    verb: ActionName,
    node_id: str,
    target: NodeTarget | None,
    inputs: Mapping[str, object],
) -> FinishedCall:
    """Run one child's driver call; its outcome, never an exception."""
    if verb is ActionName.NODE_LEAVE:
        return FinishedCall(child_id, node_id, None)
    if target is None:
        return FinishedCall(
            child_id,
            node_id,
            None if verb is not ActionName.NODE_CREATE else "node disappeared",
        )
    if verb is ActionName.NODE_CREATE:
        return _create_one(ctx, child_id, target)
    if verb is ActionName.NODE_RECOVER:
        return _recover_one(ctx, child_id, target, inputs)
    return _delete_one(ctx, child_id, target)


#: child id, verb, node id, its target (None: not loaded), inputs
Call = tuple[str, ActionName, str, NodeTarget | None, Mapping[str, object]]


def call_many(ctx: EngineContext, calls: Sequence[Call]) -> list[FinishedCall]:
    """Run a batch of quick calls; creates and deletes go to the driver a profile type at a time.

    The outcomes are those :func:`call_driver` gives one call at a time, with
    ``Driver.create_many``/``delete_many`` (one transaction of the sim driver's
    store instead of one per node).
    """
    out: list[FinishedCall] = []
    creates: dict[str, list[tuple[str, NodeTarget, NodeRequest]]] = {}
    deletes: dict[str, list[tuple[str, NodeTarget, ResourceRef]]] = {}
    for child_id, verb, node_id, target, inputs in calls:
        profile = target.profile if target is not None else "missing"
        if target is None or isinstance(profile, str) or verb is ActionName.NODE_LEAVE:
            out.append(call_driver(ctx, child_id, verb, node_id, target, inputs))
            continue
        profile_type, properties = profile
        node = target.node
        if verb is ActionName.NODE_CREATE and not node.physical_id:
            request = node_request(node, properties)
            creates.setdefault(profile_type, []).append((child_id, target, request))
        elif verb is ActionName.NODE_DELETE and node.physical_id:
            ref = resource_ref(node, properties)
            deletes.setdefault(profile_type, []).append((child_id, target, ref))
        else:
            out.append(call_driver(ctx, child_id, verb, node_id, target, inputs))
    for profile_type, created in creates.items():
        try:
            results = ctx.drivers.get(profile_type).create_many([c[2] for c in created])
        except HerdError:  # no such driver: each call says so, as alone
            out += [
                call_driver(ctx, c, ActionName.NODE_CREATE, t.node.id, t, {}) for c, t, _ in created
            ]
            continue
        finished = ctx.now()
        for (child_id, target, request), result in zip(created, results, strict=True):
            if isinstance(result, Exception):
                why = result if isinstance(result, HerdError) else repr(result)
                out.append(
                    FinishedCall(child_id, target.node.id, f"Failed in creating node: {why}")
                )
            else:
                made = made_for(target.node, profile_type, request.properties)
                out.append(
                    FinishedCall(child_id, target.node.id, None, result, finished, made_for=made)
                )
    for profile_type, deleted in deletes.items():
        try:
            errors = ctx.drivers.get(profile_type).delete_many([d[2] for d in deleted])
        except HerdError:
            out += [
                call_driver(ctx, c, ActionName.NODE_DELETE, t.node.id, t, {}) for c, t, _ in deleted
            ]
            continue
        for (child_id, target, ref), error in zip(deleted, errors, strict=True):
            if error is None:
                made = made_for(target.node, profile_type, ref.properties)
                gone = ref.physical_id
                out.append(
                    FinishedCall(child_id, target.node.id, None, made_for=made, deleted=gone)
                )
            else:
                why = error if isinstance(error, HerdError) else repr(error)
                out.append(
                    FinishedCall(child_id, target.node.id, f"Failed in deleting node: {why}")
                )
    return out


def _create_one(ctx: EngineContext, child_id: str, target: NodeTarget) -> FinishedCall:
    node = target.node
    if isinstance(target.profile, str):
        return FinishedCall(child_id, node.id, f"Failed in creating node: {target.profile}")
    profile_type, properties = target.profile
    made = made_for(node, profile_type, properties)
    if node.physical_id:  # adopted after an engine restart: the resource already exists
        existing = CreatedResource(node.physical_id, dict(node.data))
        return FinishedCall(child_id, node.id, None, existing, made_for=made)
    try:
        request = node_request(node, properties)
        created = ctx.drivers.get(profile_type).create(request)
        return FinishedCall(child_id, node.id, None, created, ctx.now(), made_for=made)
    except HerdError as exc:
        return FinishedCall(child_id, node.id, f"Failed in creating node: {exc}")
    except Exception as exc:  # a driver bug must not hang the parent
        return FinishedCall(child_id, node.id, f"Failed in creating node: {exc!r}")


def _recover_one(
    ctx: EngineContext, child_id: str, target: NodeTarget, inputs: Mapping[str, object]
) -> FinishedCall:
    node = target.node
    options = RecoveryOptions().merged(inputs)
    if isinstance(target.profile, str):
        error = f"Recovery failed: {target.profile}"
        return FinishedCall(child_id, node.id, error, options=options)
    profile_type, properties = target.profile
    ref = resource_ref(node, properties)
    outcome = recover_resource(
        ctx.drivers.get(profile_type),
        ref,
        node_request(node, properties),
        options,
        ctx.abandonable,
    )
    return FinishedCall(
        child_id,
        node.id,
        outcome.error,
        outcome.resource,
        ctx.now(),
        recovery=outcome,
        options=options,
        made_for=made_for(node, profile_type, properties),
    )


def _delete_one(ctx: EngineContext, child_id: str, target: NodeTarget) -> FinishedCall:
    node = target.node
    if isinstance(target.profile, str):
        if not node.physical_id:
            return FinishedCall(child_id, node.id, None)
        return FinishedCall(child_id, node.id, f"Failed in deleting node: {target.profile}")
    profile_type, properties = target.profile
    # A resource recorded on the row after this read (a create robbed by a forced delete)
    # is destroyed by the writer, which compares the row's physical id with ``deleted``.
    made = made_for(node, profile_type, properties)
    if not node.physical_id:
        return FinishedCall(child_id, node.id, None, made_for=made)
    try:
        ref = resource_ref(node, properties)
        ctx.drivers.get(profile_type).delete(ref)
        return FinishedCall(child_id, node.id, None, made_for=made, deleted=node.physical_id)
    except HerdError as exc:
        return FinishedCall(child_id, node.id, f"Failed in deleting node: {exc}")
    except Exception as exc:
        return FinishedCall(child_id, node.id, f"Failed in deleting node: {exc!r}")
