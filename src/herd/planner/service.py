"""Entry point of the planner: request model in, answer out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from herd.planner.allocate import (
    Outcome,
    allocate,
    allocate_secondary,
    multi_allocate,
    relocate,
)
from herd.planner.cluster import NO_NODE, ClusterState
from herd.planner.codec import format_answer, parse_request
from herd.planner.jobs import (
    attach_depends,
    build_dependencies,
    job_effect,
    migrate_op,
    node_room,
    replace_disks_op,
    sequential_peaks,
)
from herd.planner.model import (
    AllocateRequest,
    AllocateSecondaryRequest,
    ChangeGroupRequest,
    ClusterData,
    MultiAllocateRequest,
    NodeEvacuateRequest,
    PlannerOptions,
    RelocateRequest,
)
from herd.planner.moves import StepKind
from herd.planner.relocation import Plan, Relocation, change_group, node_evacuate


@dataclass(frozen=True)
class Answer:
    success: bool
    info: str
    # the decoded JSON result; its shape depends on the request (tests index it freely)
    result: Any
    plan: Plan | None = None

    def to_json(self) -> str:
        return format_answer(self.success, self.info, self.result)


def placements(relocation: Relocation) -> list[tuple[int, int]]:
    """(primary, secondary) before the job and after each of its opcodes."""
    current = relocation.old_nodes
    out = [current]
    for step in relocation.steps:
        if step.kind is StepKind.FAILOVER:
            current = (current[1], current[0])
        elif step.kind is StepKind.MIGRATE_TO:
            current = (step.node, NO_NODE)
        else:
            current = (current[0], step.node)
        out.append(current)
    return out


def opcodes(state: ClusterState, relocation: Relocation) -> list[dict[str, object]]:
    spec = state.specs[relocation.instance]
    ops = []
    for step in relocation.steps:
        if step.kind is StepKind.REPLACE_SECONDARY:
            ops.append(replace_disks_op(spec.name, state.node_names[step.node]))
        elif step.kind is StepKind.MIGRATE_TO:
            ops.append(migrate_op(spec, state.node_names[step.node]))
        else:
            ops.append(migrate_op(spec, None))
    return ops


def relocation_answer(
    state: ClusterState, plan: Plan, options: PlannerOptions, with_depends: bool = True
) -> Answer:
    """Serialise a change-group / node-evacuate plan as ``[moved, failed, jobs]``."""
    moved = [
        [
            state.specs[r.instance].name,
            state.groups[r.group].name,
            [state.node_names[n] for n in r.new_nodes if n != NO_NODE],
        ]
        for r in plan.relocations
    ]
    failed = [[state.specs[f.instance].name, f.reason] for f in plan.failures]
    jobs = [opcodes(state, r) for r in plan.relocations]
    if with_depends and jobs:
        effects = [job_effect(state.specs[r.instance], placements(r)) for r in plan.relocations]
        capacity = np.maximum(
            np.maximum(node_room(state), 0.0), sequential_peaks(effects, len(state.node_names))
        )
        attach_depends(jobs, build_dependencies(effects, capacity, options.max_resyncs_per_node))
    info = f"{len(failed)} instances failed to move and {len(moved)} were moved successfully"
    return Answer(True, info, [moved, failed, jobs], plan)


def plan_answer(data: ClusterData, options: PlannerOptions | None = None) -> Answer:
    """Answer a parsed iallocator request.

    Args:
        data: the parsed request.
        options: command-line knobs.

    Returns:
        The answer, with the relocation plan attached when there is one.
    """
    options = options or PlannerOptions()
    state = ClusterState(data)
    request = data.request
    outcome: Outcome
    if isinstance(request, ChangeGroupRequest):
        return relocation_answer(state, change_group(state, request, options), options)
    if isinstance(request, NodeEvacuateRequest):
        return relocation_answer(state, node_evacuate(state, request, options), options)
    if isinstance(request, AllocateRequest):
        outcome = allocate(state, request, options)
    elif isinstance(request, MultiAllocateRequest):
        outcome = multi_allocate(state, request, options)
    elif isinstance(request, RelocateRequest):
        outcome = relocate(state, request, options)
    elif isinstance(request, AllocateSecondaryRequest):
        outcome = allocate_secondary(state, request, options)
    else:  # pragma: no cover - the codec only builds the types above
        raise TypeError(f"unsupported request {request!r}")
    return Answer(outcome.success, outcome.info, outcome.result)


def answer_dict(raw: dict[str, object], options: PlannerOptions | None = None) -> Answer:
    """Parse a decoded request dict and answer it (raises MalformedRequest)."""
    options = options or PlannerOptions()
    return plan_answer(parse_request(raw, options.static_kvm_node_memory), options)
