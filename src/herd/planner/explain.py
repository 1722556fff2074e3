"""Readable rows describing a relocation plan (for ``herd iallocator explain``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from herd.json_types import dig, int_value, list_at
from herd.planner.cluster import NO_NODE, ClusterState
from herd.planner.codec import parse_request
from herd.planner.model import PlannerOptions
from herd.planner.service import Answer, plan_answer


@dataclass(frozen=True)
class PlanRow:
    instance: str
    template: str
    source: str
    target: str
    group: str
    steps: str
    depends: str
    outcome: str


def _nodes(state: ClusterState, nodes: tuple[int, int]) -> str:
    return "/".join(state.node_names[n] for n in nodes if n != NO_NODE)


def explain(
    raw: dict[str, object], options: PlannerOptions | None = None
) -> tuple[Answer, list[PlanRow]]:
    """Plan the request and describe every instance of it.

    Args:
        raw: the decoded request.
        options: planner options.

    Returns:
        The answer and one row per requested instance (moved or failed).
    """
    options = options or PlannerOptions()
    data = parse_request(raw, options.static_kvm_node_memory)
    answer = plan_answer(data, options)
    rows: list[PlanRow] = []
    plan = answer.plan
    if plan is None or plan.state is None:
        return answer, rows
    state = plan.state
    jobs = dig(answer.result, 2)  # a relocation's result: [moved, failed, jobs]
    for index, relocation in enumerate(plan.relocations):
        spec = state.specs[relocation.instance]
        job = dig(jobs, index)
        ops = [op for op in job if isinstance(op, Mapping)] if isinstance(job, list) else []
        steps = ", ".join(
            str(op["OP_ID"]).removeprefix("OP_INSTANCE_").lower()
            + (
                f"→{op.get('remote_node') or op.get('target_node')}"
                if op.get("remote_node") or op.get("target_node")
                else ""
            )
            for op in ops
        )
        depends = ", ".join(str(index + int_value(dig(d, 0))) for d in list_at(ops[0], "depends"))
        rows.append(
            PlanRow(
                instance=spec.name,
                template=spec.disk_template.value,
                source=_nodes(state, relocation.old_nodes),
                target=_nodes(state, relocation.new_nodes),
                group=state.groups[relocation.group].name,
                steps=f"job {index}: {steps}",
                depends=depends or "-",
                outcome="moved",
            )
        )
    original = ClusterState(data)
    for failure in plan.failures:
        i = failure.instance
        spec = state.specs[i]
        rows.append(
            PlanRow(
                instance=spec.name,
                template=spec.disk_template.value,
                source=_nodes(original, (int(original.pri[i]), int(original.sec[i]))),
                target="-",
                group="-",
                steps="-",
                depends="-",
                outcome=f"failed: {failure.reason}",
            )
        )
    return answer, rows
