"""Recovering one node: what to do (RECREATE, REBOOT, REBUILD), doing it, writing the result.

One path for every recovery: a NODE_RECOVER child of a CLUSTER_RECOVER (the
health manager's, or the API's ``recover`` action) and a NODE_RECOVER started
through the API both call :func:`recover_resource` for the driver work and
:func:`apply_recovery` to store the outcome with its events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from herd.drivers.base import CreatedResource, Driver, NodeRequest, ResourceRef
from herd.engine.background import AbandonableCalls
from herd.engine.context import EngineContext
from herd.errors import HerdError
from herd.json_types import float_value, list_at, object_at
from herd.policies.health_settings import HealthSettings, read_health_settings
from herd.store import events, node_checks
from herd.store.database import Session
from herd.store.health_leases import health_bindings
from herd.store.models import NodeRow
from herd.types import HealthStatus, NodeStatus, RecoveryOperation


@dataclass(frozen=True)
class RecoveryOptions:
    """How to recover: the operation and Senlin's recreate and fencing settings."""

    operation: RecoveryOperation = RecoveryOperation.RECREATE
    operation_params: dict[str, object] = field(default_factory=dict)
    #: seconds the old resource may take to go before RECREATE gives up (<= 0: no limit)
    delete_timeout: float = 20.0
    #: create the new resource even when deleting the old one failed or timed out
    force_recreate: bool = False
    fencing: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: HealthSettings) -> RecoveryOptions:
        return cls(
            operation=settings.operation,
            operation_params=dict(settings.operation_params),
            delete_timeout=settings.node_delete_timeout,
            force_recreate=settings.node_force_recreate,
            fencing=settings.fencing,
        )

    def to_inputs(self) -> dict[str, object]:
        return {
            "operation": self.operation.value,
            "operation_params": dict(self.operation_params),
            "delete_timeout": self.delete_timeout,
            "force_recreate": self.force_recreate,
            "fencing": list(self.fencing),
        }

    def merged(self, inputs: Mapping[str, object]) -> RecoveryOptions:
        """These options with what an action's inputs say (the API's ``operation`` wins)."""
        operation = inputs.get("operation")
        return RecoveryOptions(
            operation=RecoveryOperation(str(operation).upper()) if operation else self.operation,
            operation_params=dict(object_at(inputs, "operation_params") or self.operation_params),
            delete_timeout=float_value(inputs.get("delete_timeout", self.delete_timeout)),
            force_recreate=bool(inputs.get("force_recreate", self.force_recreate)),
            fencing=tuple(map(str, list_at(inputs, "fencing")))
            if "fencing" in inputs
            else self.fencing,
        )


def policy_options(ctx: EngineContext, session: Session, cluster_id: str | None) -> RecoveryOptions:
    """The recovery settings of the cluster's health policy, or RECREATE with defaults."""
    if cluster_id is None:
        return RecoveryOptions()
    for binding in health_bindings(session, [cluster_id]):
        try:
            _, policy = ctx.policies.create(binding.spec)
            settings = getattr(policy, "settings", None) or read_health_settings(policy.properties)
        except HerdError:
            continue
        return RecoveryOptions.from_settings(settings)
    return RecoveryOptions()


@dataclass(frozen=True)
class RecoveryOutcome:
    """What a recovery did to the node's resource."""

    error: str | None
    detail: str
    resource: CreatedResource | None = None  # the node's resource after a success
    resource_gone: bool = False  # the old resource was deleted and nothing replaced it

    @property
    def ok(self) -> bool:
        return self.error is None


def _delete_within(
    driver: Driver, ref: ResourceRef, timeout: float, calls: AbandonableCalls
) -> str | None:
    """Delete ``ref``; the reason when it failed or outlasted ``timeout`` seconds."""
    failure: list[str] = []

    def run() -> None:
        try:
            driver.delete(ref)
        except HerdError as exc:
            failure.append(str(exc))
        except Exception as exc:  # a driver bug: report it like a failure
            failure.append(repr(exc))

    if timeout <= 0:
        run()
    else:
        # The deletion runs on its own thread so that a slow one can be abandoned
        # (node_force_recreate) without holding the node pool's thread hostage; the
        # engine owns that thread and joins it when it stops.
        if not calls.run(run, timeout):
            return f"deletion did not finish within {timeout:g}s"
    return failure[0] if failure else None


def recover_resource(
    driver: Driver,
    ref: ResourceRef,
    request: NodeRequest,
    options: RecoveryOptions,
    calls: AbandonableCalls,
) -> RecoveryOutcome:
    """Run one recovery operation through the driver; never raises for driver failures.

    RECREATE deletes the old resource (within ``delete_timeout``; with
    ``force_recreate`` a failed or slow deletion does not stop it) and creates a new
    one for the same node id, name and index. REBOOT and REBUILD act in place and
    need a driver that supports them; otherwise the outcome says so.
    """
    operation = options.operation
    old = ref.physical_id
    try:
        if operation is RecoveryOperation.RECREATE:
            note = ""
            if old:
                failure = _delete_within(driver, ref, options.delete_timeout, calls)
                if failure and not options.force_recreate:
                    return RecoveryOutcome(
                        f"Recovery failed: RECREATE could not delete {old}: {failure}",
                        f"RECREATE stopped: deleting {old} failed",
                    )
                note = (
                    f" (deleting {old} failed: {failure}; node_force_recreate)" if failure else ""
                )
            try:
                created = driver.create(request)
            except HerdError as exc:
                return RecoveryOutcome(
                    f"Recovery failed: RECREATE could not create a new resource: {exc}",
                    f"RECREATE deleted {old or 'nothing'}, creation failed",
                    resource_gone=bool(old),
                )
            replaced = f"{old} replaced by {created.physical_id}" if old else "created"
            return RecoveryOutcome(None, f"RECREATE: {replaced}{note}", created)
        supported = (
            driver.supports_reboot
            if operation is RecoveryOperation.REBOOT
            else driver.supports_rebuild
        )
        if not supported:
            return RecoveryOutcome(
                f"Recovery failed: recovery action {operation.value} is not supported by "
                f"profile type {driver.profile_type} (use RECREATE)",
                f"{operation.value} not supported",
            )
        if not old:
            return RecoveryOutcome(
                f"Recovery failed: {operation.value} needs the node's physical resource, "
                "and the node has none (use RECREATE)",
                f"{operation.value} impossible without a resource",
            )
        restart = driver.reboot if operation is RecoveryOperation.REBOOT else driver.rebuild
        created = restart(ref, request)
        same = created.physical_id == old
        detail = f"{old} restarted" if same else f"{old} restarted as {created.physical_id}"
        return RecoveryOutcome(None, f"{operation.value}: {detail}", created)
    except HerdError as exc:
        return RecoveryOutcome(f"Recovery failed: {operation.value}: {exc}", operation.value)
    except Exception as exc:  # a driver bug must end the recovery, not hang its parent
        return RecoveryOutcome(f"Recovery failed: {operation.value}: {exc!r}", operation.value)


def fencing_note(options: RecoveryOptions) -> str | None:
    """The event text for fencing, which herd cannot do (no compute hosts to fence)."""
    wanted = list(options.fencing)
    if options.operation_params.get("fence_compute"):
        wanted.append("COMPUTE")
    if not wanted:
        return None
    services = ", ".join(sorted(set(wanted)))
    return f"Fencing {services} skipped: herd nodes have no compute host to fence (a no-op)."


def mark_recovering(session: Session, node: NodeRow, now: float) -> None:
    node.status, node.status_reason = NodeStatus.RECOVERING, "Recovery in progress"
    node.updated_at = now


def apply_recovery(
    session: Session,
    node: NodeRow,
    outcome: RecoveryOutcome,
    options: RecoveryOptions,
    event_fields: Mapping[str, Any],
    now: float,
) -> str:
    """Store a recovery's outcome on the node, with events; return the action's reason.

    ``event_fields`` are the acting action's event fields for the node
    (``ActionExecution.node_event_row`` without status and reason).
    """
    base = {k: v for k, v in event_fields.items() if k not in ("status", "reason", "level")}
    note = fencing_note(options)
    if note:
        events.record(session, now=now, **{**base, "status": "FENCE_SKIPPED", "reason": note})
    if outcome.ok and outcome.resource is not None:
        node.physical_id = outcome.resource.physical_id
        node.data = {**(node.data or {}), **outcome.resource.data}
        node.status, node.status_reason = NodeStatus.ACTIVE, "Recovery succeeded"
        node.health, node.health_reason = HealthStatus.CHECK_COMPLETE, "Recovered"
        node.health_marked_by, node.health_marked_at = "recover", now
        node.health_generation = (node.health_generation or 0) + 1
        node.updated_at = now
        reason = f"Recovery succeeded: {outcome.detail}"
        events.record(session, now=now, **{**base, "status": "ACTIVE", "reason": reason})
        node_checks.finish_recovery(
            session,
            node.id,
            node.cluster_id,
            succeeded=True,
            result=f"SUCCEEDED: {outcome.detail}",
            now=now,
        )
        return "Node recovered successfully."
    error = outcome.error or "Recovery failed"
    if outcome.resource_gone:
        node.physical_id = None
    node.status, node.status_reason = NodeStatus.ERROR, error
    node.updated_at = now
    events.record(
        session, now=now, **{**base, "status": "ERROR", "reason": error, "level": "ERROR"}
    )
    node_checks.finish_recovery(
        session, node.id, node.cluster_id, succeeded=False, result=f"FAILED: {error}", now=now
    )
    return error
