"""CLUSTER_RECOVER in the batch policy's batches (a herd extension: Senlin batched updates only).

Without a batch policy a recovery plans every NODE_RECOVER child at once. With
one, the recover handler stores its targets (node id -> the child's inputs) and
their batches in ``data['update']`` instead (:func:`store_recover_plan`), and
:func:`recover_in_batches` plans and runs one batch of children at a time,
broken members first, pausing ``pause_time`` between batches. As in the rolling
update, the batch's number is stored before its children are planned, so a
resumed run continues at that batch and reuses the children already planned.
"""

from __future__ import annotations

from collections.abc import Mapping

from herd.engine.execution import ActionExecution
from herd.engine.node_results import ChildResults
from herd.engine.nodeops import NodeOperations
from herd.policies.batch import DATA_KEY, split_batches
from herd.store import actions as action_store


def batched(ex: ActionExecution) -> bool:
    """True when a batch policy wrote a schedule for this action."""
    schedule = ex.data.get(DATA_KEY)
    return isinstance(schedule, dict) and "batch_size" in schedule


def store_recover_plan(
    ex: ActionExecution, order: list[str], targets: Mapping[str, Mapping[str, object]]
) -> None:
    """Store the recovery's targets and batches once (a resumed run keeps the first plan)."""
    schedule = dict(ex.data[DATA_KEY])
    if "recover" in schedule:
        return
    schedule["recover"] = {node: dict(inputs) for node, inputs in targets.items()}
    schedule["plan"] = split_batches([n for n in order if n in targets], schedule["batch_size"])
    schedule["batch"] = 0
    ex.data[DATA_KEY] = schedule
    ex.save_data()


def recover_in_batches(ex: ActionExecution, nodeops: NodeOperations) -> tuple[ChildResults, str]:
    """Run the stored batches from the one reached; the results and where it stopped ("" if not)."""
    schedule = dict(ex.data.get(DATA_KEY) or {})
    targets: dict[str, dict[str, object]] = schedule.get("recover") or {}
    plan: list[list[str]] = schedule.get("plan") or []
    pause = float(schedule.get("pause_time") or 0)
    total = ChildResults()
    for number in range(int(schedule.get("batch") or 0), len(plan)):
        ex.check_cancel()
        schedule["batch"] = number
        ex.data[DATA_KEY] = schedule
        ex.save_data()  # durable before this batch's children exist
        with ex.ctx.database.read() as session:
            planned = {row.target: row.id for row in action_store.children(session, ex.id)}
        batch = plan[number]
        todo = {n: targets[n] for n in batch if n not in planned and n in targets}
        child_ids = [planned[n] for n in batch if n in planned]
        if todo:
            child_ids += nodeops.plan_recover(ex, todo)
        if child_ids:
            results = nodeops.run(ex, child_ids)
            total.succeeded += results.succeeded
            total.failed.update(results.failed)
            if not results.ok:
                left = len(plan) - number - 1
                return total, (
                    f"stopped at batch {number + 1} of {len(plan)}"
                    + (f", {left} batch(es) not started" if left else "")
                )
        if number + 1 < len(plan) and pause > 0:
            ex.wait(pause)
    schedule["batch"] = len(plan)
    ex.data[DATA_KEY] = schedule
    ex.save_data()
    return total, ""
