"""Validate any iallocator answer (herd's or hail's) against its request.

Checks the envelope and result shapes Ganeti validates, that moved plus
failed is exactly the requested set, that the jobs take every moved instance
to the nodes the answer names through valid opcodes, and that Ganeti's model
accepts every opcode in the state the jobs have reached: the same checks the
planner runs (:mod:`herd.planner.moves`), hard limits always, soft limits
(spindle and vcpu ratios, N+1, exclusion tags) unless the node being left is
offline or ``ignore_soft_errors`` is given. Finally the jobs' ``depends``
must make every parallel execution safe (the model of :mod:`herd.planner.jobs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState
from herd.planner.jobs import (
    DependencyModel,
    JobEffect,
    job_effect,
    node_room,
    sequential_peaks,
)
from herd.planner.model import (
    AllocateRequest,
    ChangeGroupRequest,
    ClusterData,
    NodeEvacuateRequest,
    RelocateRequest,
)
from herd.planner.moves import StepKind, refusal, soft_checks
from herd.planner.score import cluster_score

ACCEPTED_OPCODES = {"OP_INSTANCE_FAILOVER", "OP_INSTANCE_MIGRATE", "OP_INSTANCE_REPLACE_DISKS"}


@dataclass
class CheckReport:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    score_before: float = 0.0
    score_after: float = 0.0
    moved: int = 0
    failed: int = 0

    @property
    def valid(self) -> bool:
        return not self.errors


def check_answer(
    data: ClusterData,
    answer: object,
    max_resyncs_per_node: int = 0,
    ignore_soft_errors: bool = False,
) -> CheckReport:
    """Validate ``answer`` (the decoded JSON) against the parsed request.

    Args:
        data: the parsed request.
        answer: the decoded answer object.
        max_resyncs_per_node: when positive, also require that no more than
            this many DRBD resyncs can run at once on a node.
        ignore_soft_errors: report moves that only break soft limits (spindle
            and vcpu ratios, N+1, exclusion tags) as warnings, as an answer
            planned with ``--ignore-soft-errors`` may.

    Returns:
        The report; ``valid`` is False when any error was found.
    """
    report = CheckReport()
    state = ClusterState(data)
    report.score_before = report.score_after = cluster_score(state)
    if not isinstance(answer, dict) or not {"success", "info", "result"} <= set(answer):
        report.errors.append("answer must be a dict with success, info and result")
        return report
    if not isinstance(answer["success"], bool) or not isinstance(answer["info"], str):
        report.errors.append("success must be a bool and info a string")
        return report
    request = data.request
    if isinstance(request, ChangeGroupRequest | NodeEvacuateRequest):
        _check_relocation(state, request, answer, report, max_resyncs_per_node, ignore_soft_errors)
    elif answer["success"] and isinstance(request, AllocateRequest | RelocateRequest):
        _check_nodes(state, request, answer["result"], report)
    return report


def _check_nodes(
    state: ClusterState,
    request: AllocateRequest | RelocateRequest,
    result: object,
    report: CheckReport,
) -> None:
    if not isinstance(result, list) or not all(isinstance(n, str) for n in result):
        report.errors.append("result must be a list of node names")
        return
    for name in result:
        if name not in state.node_index:
            report.errors.append(f"unknown node {name}")
        elif state.offline[state.node_index[name]]:
            report.errors.append(f"node {name} is offline or drained")
    groups = {int(state.group[state.node_index[n]]) for n in result if n in state.node_index}
    if len(groups) > 1:
        report.errors.append("nodes of one instance must be in one group")
    if isinstance(request, AllocateRequest) and len(result) != request.required_nodes:
        report.errors.append(f"expected {request.required_nodes} nodes, got {len(result)}")


def _check_relocation(
    state: ClusterState,
    request: ChangeGroupRequest | NodeEvacuateRequest,
    answer: dict[str, object],
    report: CheckReport,
    max_resyncs: int,
    ignore_soft_errors: bool,
) -> None:
    result = answer["result"]
    if not answer["success"]:
        report.errors.append(f"request failed: {answer['info']}")
        return
    if not isinstance(result, list) or len(result) != 3:
        report.errors.append("result must be [moved, failed, jobs]")
        return
    moved, failed, jobs = result
    names: list[str] = []
    targets: dict[str, tuple[str, list[str]]] = {}
    for entry in moved if isinstance(moved, list) else [None]:
        if (
            not isinstance(entry, list)
            or len(entry) != 3
            or not all(isinstance(x, str) and x for x in entry[:2])
            or not isinstance(entry[2], list)
            or not all(isinstance(n, str) and n for n in entry[2])
        ):
            report.errors.append(f"malformed moved entry {entry!r}")
            return
        names.append(entry[0])
        targets[entry[0]] = (entry[1], entry[2])
    for entry in failed if isinstance(failed, list) else [None]:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
            report.errors.append(f"malformed failed entry {entry!r}")
            return
        names.append(entry[0])
    report.moved, report.failed = len(targets), len(names) - len(targets)
    if len(names) != len(set(names)):
        report.errors.append("an instance appears more than once in moved/failed")
    if set(names) != set(request.instances):
        missing = sorted(set(request.instances) - set(names))
        extra = sorted(set(names) - set(request.instances))
        report.errors.append(f"moved+failed != requested (missing {missing}, extra {extra})")
    if not isinstance(jobs, list) or not all(
        isinstance(job, list) and job and all(isinstance(op, dict) for op in job) for job in jobs
    ):
        report.errors.append("jobs must be a list of non-empty lists of opcode dicts")
        return
    _simulate(state, request, targets, jobs, report, max_resyncs, ignore_soft_errors)


def _depends(job: list[dict[str, object]], index: int, report: CheckReport) -> list[int]:
    found = []
    for op in job:
        depends = op.get("depends") or []
        # a depends that is no list is reported entry by entry (or whole) as invalid
        for dep in depends if isinstance(depends, Iterable) else [depends]:
            if (
                not isinstance(dep, list)
                or len(dep) != 2
                or not isinstance(dep[0], int)
                or dep[0] >= 0
                or index + dep[0] < 0
            ):
                report.errors.append(f"job {index}: invalid depends {dep!r}")
                continue
            found.append(index + dep[0])
    return found


def _simulate(
    state: ClusterState,
    request: ChangeGroupRequest | NodeEvacuateRequest,
    targets: dict[str, tuple[str, list[str]]],
    jobs: list[list[dict[str, object]]],
    report: CheckReport,
    max_resyncs: int,
    ignore_soft_errors: bool,
) -> None:
    sim = state.copy()
    source_group = {n: int(state.group[state.pri[state.inst_index[n]]]) for n in request.instances}
    touched: set[str] = set()
    effects = []
    deps = []
    for index, job in enumerate(jobs):
        deps.append(_depends(job, index, report))
        names = {op.get("instance_name") for op in job}
        if len(names) != 1 or not isinstance(next(iter(names)), str):
            report.errors.append(f"job {index}: opcodes must all name one instance")
            return
        name = str(next(iter(names)))
        if name not in targets:
            report.errors.append(f"job {index}: instance {name} is not in the moved list")
            return
        touched.add(name)
        i = sim.inst_index[name]
        path = [(int(sim.pri[i]), int(sim.sec[i]))]
        for op in job:
            step = _apply(sim, i, op, report, index, ignore_soft_errors)
            if step is None:
                return
            path.append(step)
        effects.append(job_effect(sim.specs[i], path))
    for name, (group_name, nodes) in targets.items():
        if name not in touched and nodes:
            i = sim.inst_index[name]
            current = [sim.node_names[n] for n in (sim.pri[i], sim.sec[i]) if n != NO_NODE]
            if current != nodes:
                report.errors.append(f"{name}: no job moves it to {nodes}")
            continue
        i = sim.inst_index[name]
        final = [sim.node_names[n] for n in (int(sim.pri[i]), int(sim.sec[i])) if n != NO_NODE]
        if final != nodes:
            report.errors.append(f"{name}: jobs end on {final}, answer says {nodes}")
        group = sim.groups[int(sim.group[sim.pri[i]])]
        if group.name != group_name:
            report.errors.append(f"{name}: ends in group {group.name}, answer says {group_name}")
        moved_group = int(sim.group[sim.pri[i]])
        if isinstance(request, NodeEvacuateRequest) and moved_group != source_group[name]:
            report.errors.append(f"{name}: node-evacuate must stay in its group")
        if isinstance(request, ChangeGroupRequest):
            wanted = set(request.target_groups)
            if moved_group == source_group[name]:
                report.errors.append(f"{name}: change-group left it in its group")
            elif wanted and not {group.uuid, group.name} & wanted:
                report.errors.append(f"{name}: group {group.name} is not a target")
    report.score_after = cluster_score(sim)
    _check_parallel(state, effects, deps, report, max_resyncs)


def _apply(
    sim: ClusterState,
    i: int,
    op: dict[str, object],
    report: CheckReport,
    index: int,
    ignore_soft_errors: bool,
) -> tuple[int, int] | None:
    spec = sim.specs[i]
    kind = op.get("OP_ID")
    primary, secondary = int(sim.pri[i]), int(sim.sec[i])
    where = f"job {index} ({spec.name}, {kind})"
    if kind not in ACCEPTED_OPCODES:
        report.errors.append(f"{where}: opcode not accepted by Ganeti")
        return None
    target_name = (
        op.get("remote_node") if kind == "OP_INSTANCE_REPLACE_DISKS" else op.get("target_node")
    )
    target = sim.node_index.get(str(target_name), NO_NODE) if target_name is not None else NO_NODE
    if target_name is not None and target == NO_NODE:
        report.errors.append(f"{where}: unknown node {target_name}")
        return None
    move = _move_of(spec.disk_template.is_drbd, kind, (primary, secondary), target)
    if isinstance(move, str):
        report.errors.append(f"{where}: {move}")
        return None
    step, new = move
    left = secondary if step is StepKind.REPLACE_SECONDARY else primary
    for node in {n for n in new if n != NO_NODE} - {primary, secondary}:
        if sim.offline[node]:
            report.errors.append(f"{where}: node {sim.node_names[node]} is offline or drained")
    if step is StepKind.FAILOVER and sim.offline[secondary]:
        report.errors.append(f"{where}: node {sim.node_names[secondary]} is offline or drained")
    sim.detach(i)
    # Ganeti's model first: hard limits always, soft ones unless forced.
    hard = refusal(sim, i, step, (primary, secondary), target, soft=False)
    soft = None
    if hard is None and soft_checks(sim, left, False):
        soft = refusal(sim, i, step, (primary, secondary), target, soft=True)
    sim.attach(i, *new)
    found = hard or soft
    if found is not None:
        text = f"{where}: Ganeti's model refuses {found.describe(sim)}: {found.mode.value}"
        if hard is not None:
            report.errors.append(text + " (hard limit)")
        elif ignore_soft_errors:
            report.warnings.append(text + " (soft limit, ignored)")
        else:
            report.errors.append(text + " (soft limit)")
    return new


def _move_of(
    drbd: bool, kind: str, old: tuple[int, int], target: int
) -> tuple[StepKind, tuple[int, int]] | str:
    """The move an opcode stands for and the placement after it (or an error)."""
    primary, secondary = old
    if kind == "OP_INSTANCE_REPLACE_DISKS":
        if not drbd or target in (NO_NODE, primary, secondary):
            return "needs a DRBD instance and a new secondary"
        return StepKind.REPLACE_SECONDARY, (primary, target)
    if target == NO_NODE:
        if not drbd:
            return "shared-storage moves need target_node"
        return StepKind.FAILOVER, (secondary, primary)
    if drbd:
        if target != secondary:
            return "DRBD can only fail over to its secondary"
        return StepKind.FAILOVER, (secondary, primary)
    if target == primary:
        return "target_node is already the primary"
    return StepKind.MIGRATE_TO, (target, NO_NODE)


def _check_parallel(
    state: ClusterState,
    effects: list[JobEffect],
    deps: list[list[int]],
    report: CheckReport,
    max_resyncs: int,
) -> None:
    if not effects:
        return
    capacity = np.maximum(
        np.maximum(node_room(state), 0.0), sequential_peaks(effects, len(state.node_names))
    )
    # The parallel bound is herd's own (Ganeti checks a sequential plan): the
    # planner adds depends for memory, disk, spindles and vcpus alike, so a
    # missing one is an error for every resource.
    model = DependencyModel(effects, capacity, max_resyncs or len(effects) + 1)
    for job, direct in enumerate(deps):
        model.register(job)
        for dep in direct:
            model.depend(job, dep)
    seen: set[tuple[int, int]] = set()
    for job in range(len(effects)):
        for node, other in model.violations(job, len(effects)):
            if (node, other) in seen:
                continue
            seen.add((node, other))
            report.errors.append(
                f"job {other}: node {state.node_names[node]} can exceed its capacity or resync "
                "limit when jobs run in parallel (missing depends)"
            )
