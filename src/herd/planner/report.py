"""A relocation plan as the dashboard shows it: the answer, each host before and after, the jobs.

Pure: it plans with :func:`herd.planner.explain.explain` and checks the answer
with :func:`herd.planner.check.check_answer`, both on the decoded request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from herd.planner.check import CheckReport, check_answer
from herd.planner.cluster import ClusterState
from herd.planner.codec import parse_request
from herd.planner.explain import PlanRow, explain
from herd.planner.model import PlannerOptions
from herd.planner.service import Answer


@dataclass(frozen=True)
class HostUsage:
    """One host's memory and disk (MiB) before the plan and after every job ran."""

    name: str
    group: str
    offline: bool
    memory_total: float
    memory_free_before: float
    memory_free_after: float
    disk_total: float
    disk_free_before: float
    disk_free_after: float


@dataclass(frozen=True)
class JobView:
    """One job of a relocation answer: its opcodes and the jobs it must wait for."""

    index: int
    instance: str
    opcodes: list[dict[str, str]]
    depends_on: list[int]


@dataclass(frozen=True)
class PlanReport:
    """Everything the relocation page shows about one request."""

    answer: Answer
    rows: list[PlanRow]
    hosts: list[HostUsage]
    jobs: list[JobView]
    check: CheckReport = field(default_factory=CheckReport)


def _hosts(before: ClusterState, after: ClusterState) -> list[HostUsage]:
    names = {i: g.name for i, g in enumerate(before.groups)}
    free_before, free_after = before.unallocated, after.unallocated
    return [
        HostUsage(
            name=name,
            group=names.get(int(before.group[i]), ""),
            offline=bool(before.offline[i]),
            memory_total=float(before.t_mem[i]),
            memory_free_before=float(free_before[i]),
            memory_free_after=float(free_after[i]),
            disk_total=float(before.t_dsk[i]),
            disk_free_before=float(before.f_dsk[i]),
            disk_free_after=float(after.f_dsk[i]),
        )
        for i, name in enumerate(before.node_names)
    ]


def _jobs(answer: Answer) -> list[JobView]:
    result = answer.result
    if not answer.success or not isinstance(result, list) or len(result) != 3:
        return []
    moved, _failed, jobs = result
    views = []
    for index, ops in enumerate(jobs):
        depends = sorted(
            {index + int(d[0]) for op in ops for d in op.get("depends", []) if d and d[0] < 0}
        )
        views.append(
            JobView(
                index=index,
                instance=str(moved[index][0]) if index < len(moved) else "",
                opcodes=[
                    {
                        "op": str(op.get("OP_ID", "")),
                        "node": str(op.get("remote_node") or op.get("target_node") or ""),
                    }
                    for op in ops
                ],
                depends_on=depends,
            )
        )
    return views


def plan_report(raw: dict[str, object], options: PlannerOptions | None = None) -> PlanReport:
    """Plan an iallocator request and describe the result for people.

    Args:
        raw: the decoded request (raises ``MalformedRequest`` when it is not one).
        options: planner options.

    Returns:
        The answer, one row per instance, every host's memory and disk before and
        after (unchanged for allocation requests, which move nothing), the jobs
        with their dependencies as absolute job indexes, and the answer's check.
    """
    options = options or PlannerOptions()
    data = parse_request(raw, options.static_kvm_node_memory)
    answer, rows = explain(raw, options)
    before = ClusterState(data)
    after = answer.plan.state if answer.plan is not None and answer.plan.state else before
    check = check_answer(
        data,
        json.loads(answer.to_json()),
        options.max_resyncs_per_node,
        ignore_soft_errors=options.ignore_soft_errors,
    )
    return PlanReport(answer, rows, _hosts(before, after), _jobs(answer), check)
