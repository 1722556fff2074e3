"""NODE_OPERATION and CLUSTER_OPERATION: profile operations (reboot, stop, signal, ...).

A NODE_OPERATION runs one operation on its node under the node lock (and a
shared lock of its cluster). A CLUSTER_OPERATION holds the cluster lock and
first stores one child NODE_OPERATION per member (one transaction), then runs
the children's driver calls on the node pool; a resumed parent runs only the
children that have not ended. Each node goes OPERATING while its call runs and
ends ACTIVE (``Operation '<op>' succeeded``) or ERROR with the driver's reason,
with an event either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.operations import OperationsDriver, validate_operation
from herd.engine.clusters import eval_status
from herd.engine.context import EngineContext
from herd.engine.driver_args import node_request, resource_ref
from herd.engine.execution import ActionCancelled, ActionExecution, Outcome
from herd.errors import HerdError
from herd.store import actions as action_store
from herd.store import clusters, events, profiles
from herd.store import nodes as node_store
from herd.types import ActionName, ActionStatus, ClusterStatus, NodeStatus

WAIT_STEP = 0.5  # seconds between cancel checks while children run


def _prepare(
    ctx: EngineContext, node_id: str, operation: str, params: Mapping[str, object]
) -> tuple[OperationsDriver, ResourceRef, NodeRequest, dict[str, object]]:
    """Load the node and its driver and validate the operation again; raise HerdError."""
    with ctx.database.read() as session:
        node = node_store.get(session, node_id)
        profile = profiles.get(session, node.profile_id) if node is not None else None
    if node is None or profile is None:
        raise HerdError(f"The node '{node_id}' could not be found.")
    driver = ctx.drivers.get(profile.type)
    if not isinstance(driver, OperationsDriver):
        raise HerdError(f"The profile type '{profile.type}' has no operations.")
    checked = validate_operation(
        profile.type,
        driver.operations_schema,
        operation,
        params,
        allow_uncatchable=ctx.settings.allow_uncatchable_signals,
    )
    properties = driver.validate_properties(profile.spec.get("properties", {}))
    ref = resource_ref(node, properties)
    request = node_request(node, properties)
    return driver, ref, request, checked


def _set_operating(ex: ActionExecution, node_id: str, operation: str) -> None:
    with ex.ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is not None:
            row.status = NodeStatus.OPERATING
            row.status_reason = f"Operation '{operation}' in progress"
            row.updated_at = ex.ctx.now()


def _write_result(
    ex: ActionExecution,
    node_id: str,
    operation: str,
    result: CreatedResource | None,
    error: str | None,
    child_id: str | None = None,
) -> None:
    """The node's new state, its event, and the child action's end, in one transaction."""
    now = ex.ctx.now()
    with ex.ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is not None:
            if error is None and result is not None:
                row.physical_id = result.physical_id
                row.data = {**(row.data or {}), **result.data}
                row.status = NodeStatus.ACTIVE
                row.status_reason = f"Operation '{operation}' succeeded"
            else:
                row.status = NodeStatus.ERROR
                row.status_reason = f"Operation '{operation}' failed: {error}"
            row.updated_at = now
            fields = ex.node_event_row(
                row, row.status, row.status_reason, "INFO" if error is None else "ERROR"
            )
            fields["action"] = ActionName.NODE_OPERATION
            events.record(session, now=now, **fields)
        if child_id is not None:
            action_store.set_status(
                session,
                child_id,
                ActionStatus.SUCCEEDED if error is None else ActionStatus.FAILED,
                f"Operation '{operation}' succeeded" if error is None else str(error),
                now,
            )


def operate_node(
    ex: ActionExecution,
    node_id: str,
    operation: str,
    params: Mapping[str, object],
    child_id: str | None = None,
) -> str | None:
    """Run one operation on one node and record the outcome; the error text or None."""
    try:
        driver, ref, request, checked = _prepare(ex.ctx, node_id, operation, params)
    except HerdError as exc:
        _write_result(ex, node_id, operation, None, str(exc), child_id)
        return str(exc)
    _set_operating(ex, node_id, operation)
    try:
        result = driver.run_operation(ref, request, operation, checked)
    except HerdError as exc:
        _write_result(ex, node_id, operation, None, str(exc), child_id)
        return str(exc)
    except Exception as exc:  # a driver bug must fail the node, not hang the parent
        _write_result(ex, node_id, operation, None, repr(exc), child_id)
        return repr(exc)
    _write_result(ex, node_id, operation, result, None, child_id)
    return None


class OperationHandlers:
    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool

    def node_operation(self, ex: ActionExecution) -> Outcome:
        operation = str(ex.inputs.get("operation", ""))
        params = ex.inputs.get("params") or {}
        # Once: a resumed run must not reboot (or signal) the node a second time.
        error = ex.once("operation", lambda: operate_node(ex, ex.target, operation, params))
        with ex.ctx.database.read() as session:
            node = node_store.get(session, ex.target)
        if node is not None and node.cluster_id:
            eval_status(ex, node.cluster_id)
        if error is not None:
            return Outcome.failed(f"Operation '{operation}' failed: {error}")
        return Outcome.ok(f"Operation '{operation}' succeeded.")

    def cluster_operation(self, ex: ActionExecution) -> Outcome:
        operation = str(ex.inputs.get("operation", ""))
        params = ex.inputs.get("params") or {}
        self._set_cluster_operating(ex)
        children = self._plan(ex, [str(n) for n in ex.inputs.get("nodes") or []])
        failed: dict[str, str] = {}
        pending: dict[Future[str | None], tuple[str, str]] = {}
        for child_id, node_id, status, reason in children:
            if status is ActionStatus.SUCCEEDED:
                continue
            if status.is_final:
                failed[node_id] = reason
                continue
            future = self.pool.submit(operate_node, ex, node_id, operation, params, child_id)
            pending[future] = (child_id, node_id)
        try:
            while pending:
                done, _ = wait(list(pending), timeout=WAIT_STEP)
                for future in done:
                    _, node_id = pending.pop(future)
                    error = future.result()
                    if error is not None:
                        failed[node_id] = error
                ex.check_cancel()
        except ActionCancelled:
            for future, (child_id, _) in pending.items():
                if future.cancel():
                    with ex.ctx.database.write() as session:
                        action_store.set_status(
                            session,
                            child_id,
                            ActionStatus.CANCELLED,
                            "Parent cancelled",
                            ex.ctx.now(),
                        )
            # Calls under way finish first (a driver call is not interrupted), so that the
            # cluster's status below is evaluated from final member states.
            wait([future for future in pending if not future.cancelled()])
            raise
        finally:
            if ex.cluster_id:
                eval_status(ex, ex.cluster_id)
        ex.outputs["nodes_failed"] = failed
        if failed:
            details = "; ".join(f"{node}: {reason}" for node, reason in sorted(failed.items()))
            return Outcome.failed(
                f"Operation '{operation}' failed on {len(failed)} node(s): {details}"
            )
        return Outcome.ok(f"Operation '{operation}' succeeded on {len(children)} node(s).")

    def _set_cluster_operating(self, ex: ActionExecution) -> None:
        with ex.ctx.database.write() as session:
            cluster = clusters.get(session, ex.target)
            if cluster is not None:
                cluster.status = ClusterStatus.OPERATING
                cluster.status_reason = f"Operation '{ex.inputs.get('operation')}' in progress"
                cluster.updated_at = ex.ctx.now()

    def _plan(
        self, ex: ActionExecution, node_ids: list[str]
    ) -> list[tuple[str, str, ActionStatus, str]]:
        """The children (one per node, stored once), as (child id, node id, status, reason)."""
        now = ex.ctx.now()
        with ex.ctx.database.write() as session:
            # Checked in the plan's own transaction: the children are the plan's record.
            if not action_store.has_children(session, ex.id):
                for node in node_store.get_many(session, node_ids):
                    ex.add_child(
                        session,
                        ActionName.NODE_OPERATION,
                        node_id=node.id,
                        cluster_id=ex.cluster_id,
                        project=ex.project,
                        inputs={k: ex.inputs.get(k) for k in ("operation", "params")},
                        now=now,
                    )
                session.flush()
            order = {node_id: position for position, node_id in enumerate(node_ids)}
            rows = sorted(
                action_store.child_summaries(session, ex.id),
                key=lambda row: order.get(row.target, len(order)),
            )
            return [
                (row.id, row.target, ActionStatus(row.status), row.status_reason or "")
                for row in rows
            ]
