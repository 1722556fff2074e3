"""allocate, multi-allocate, relocate and allocate-secondary requests.

Allocation picks, in every allocable group, the best node (or DRBD pair) by
whole-cluster score, then the group by (alloc_policy, score), as hail's
``findBestAllocGroup``. The answer texts mimic hail's.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState
from herd.planner.constraints import FailMode, ipolicy_violation
from herd.planner.model import (
    AllocateRequest,
    AllocateSecondaryRequest,
    AllocPolicy,
    DiskTemplate,
    MultiAllocateRequest,
    PlannerOptions,
    RelocateRequest,
)
from herd.planner.moves import soft_checks
from herd.planner.pairs import PairFailure, best_pair
from herd.planner.relocation import no_good_node
from herd.planner.score import ScoreBase
from herd.planner.search import Choice, NoChoice, best_secondary, best_single


@dataclass(frozen=True)
class Outcome:
    """A request's answer before serialisation."""

    success: bool
    info: str
    result: object


def _modes_text(modes: Counter[FailMode]) -> str:
    return ", ".join(f"{m.value}: {c}" for m, c in sorted(modes.items()))


def place_new(
    state: ClusterState, request: AllocateRequest, options: PlannerOptions
) -> tuple[tuple[int, int] | None, str]:
    """Find nodes for a new instance and place it in ``state`` on success.

    Returns:
        ((primary, secondary), info) on success, (None, reason) otherwise.
    """
    spec = request.spec
    i = state.add_new_instance(spec)
    soft = not options.ignore_soft_errors
    allowed_nodes = request.restrict_to_nodes or (
        tuple(options.restrict_to_nodes) if options.restrict_to_nodes else None
    )
    everything = np.arange(len(state.node_names), dtype=np.int64)
    whole = ScoreBase(state, everything)
    best: tuple[int, float, str, Choice] | None = None
    messages: list[str] = []
    for g, group in enumerate(state.groups):
        if request.group_name is not None and group.name != request.group_name:
            continue
        if group.alloc_policy is AllocPolicy.UNALLOCABLE:
            continue
        nodes = state.group_nodes(g)
        if nodes.size == 0:
            continue
        label = f"Group {group.name} ({group.alloc_policy.wire_name})"
        missing = [n for n in spec.networks if n not in group.networks]
        if missing:
            messages.append(
                f"group {group.name} is not connected to a network required by instance {spec.name}"
            )
            continue
        violation = ipolicy_violation(spec, group.ipolicy)
        if violation is not None:
            messages.append(
                f"{label}: No valid allocation solutions, failure reasons: "
                f"{violation[0].value}: 1 (instance policy: {violation[1]})"
            )
            continue
        cands = np.asarray(
            [
                n
                for n in nodes.tolist()
                if not state.offline[n]
                and (allowed_nodes is None or state.node_names[n] in allowed_nodes)
            ],
            dtype=np.int64,
        )
        if cands.size < request.required_nodes:
            messages.append(f"Group {group.name}: error Not enough online nodes")
            continue
        choice: Choice | NoChoice | PairFailure | None
        if request.required_nodes >= 2 or spec.disk_template is DiskTemplate.DRBD:
            choice = best_pair(state, i, cands, whole, soft)
        else:
            choice = best_single(state, i, cands, whole, soft)
        if not isinstance(choice, Choice):
            modes = choice.modes if isinstance(choice, NoChoice | PairFailure) else Counter()
            messages.append(
                f"{label}: No valid allocation solutions, failure reasons: {_modes_text(modes)}"
            )
            continue
        names = "/".join(
            state.node_names[n] for n in (choice.primary, choice.secondary) if n != NO_NODE
        )
        text = (
            f"{label}: score: {choice.score:.8f}, successes {choice.successes}, "
            f"failures 0 () for node(s) {names}"
        )
        key = (int(group.alloc_policy), choice.score)
        if best is None or key < (best[0], best[1]):
            best = (int(group.alloc_policy), choice.score, text, choice)
    if best is None:
        return None, ", ".join(messages) or "no allocable group has online nodes"
    _, _, text, choice = best
    state.attach(i, choice.primary, choice.secondary)
    group_name = state.groups[int(state.group[choice.primary])].name
    return (choice.primary, choice.secondary), f"Selected group: {group_name}, {text}"


def _node_names(state: ClusterState, nodes: tuple[int, int]) -> list[str]:
    return [state.node_names[n] for n in nodes if n != NO_NODE]


def allocate(state: ClusterState, request: AllocateRequest, options: PlannerOptions) -> Outcome:
    work = state.copy()
    nodes, info = place_new(work, request, options)
    if nodes is None:
        return Outcome(False, info, [])
    return Outcome(True, info, _node_names(work, nodes))


def multi_allocate(
    state: ClusterState, request: MultiAllocateRequest, options: PlannerOptions
) -> Outcome:
    """Allocate one after another; unlike hail, one failure does not sink the rest."""
    work = state.copy()
    placed: list[list[object]] = []
    failed: list[str] = []
    for item in request.instances:
        nodes, _ = place_new(work, item, options)
        if nodes is None:
            failed.append(item.spec.name)
        else:
            placed.append([item.spec.name, _node_names(work, nodes)])
    info = f"{len(placed)} instances allocated, {len(failed)} failed"
    return Outcome(True, info, [placed, failed])


def relocate(state: ClusterState, request: RelocateRequest, options: PlannerOptions) -> Outcome:
    """Replace one node of an instance (the DRBD secondary, or a shared primary)."""
    work = state.copy()
    i = work.inst_index[request.name]
    spec = work.specs[i]
    primary, secondary = int(work.pri[i]), int(work.sec[i])
    soft = not options.ignore_soft_errors
    group = int(work.group[primary])
    cands = np.asarray(
        [
            n
            for n in work.group_nodes(group).tolist()
            if not work.offline[n]
            and n not in (primary, secondary)
            and work.node_names[n] not in request.relocate_from
        ],
        dtype=np.int64,
    )
    if spec.disk_template is DiskTemplate.DRBD:
        work.detach(i)
        base = ScoreBase(work, work.group_nodes(group))
        soft = soft_checks(work, secondary, not soft)
        choice: Choice | NoChoice = best_secondary(work, i, primary, cands, base, soft)
    elif spec.disk_template.is_externally_mirrored:
        work.detach(i)
        base = ScoreBase(work, work.group_nodes(group))
        soft = soft_checks(work, primary, not soft)
        choice = best_single(work, i, cands, base, soft, migrate_from=primary)
    else:
        return Outcome(
            False, f"Instances of type {spec.disk_template.value} cannot be relocated", []
        )
    if not isinstance(choice, Choice):
        return Outcome(False, no_good_node(work, choice), [])
    node = choice.secondary if spec.disk_template is DiskTemplate.DRBD else choice.primary
    return Outcome(True, "success", [work.node_names[node]])


def allocate_secondary(
    state: ClusterState, request: AllocateSecondaryRequest, options: PlannerOptions
) -> Outcome:
    """Pick a secondary for an instance about to be converted to DRBD."""
    work = state.copy()
    i = work.inst_index[request.name]
    primary = int(work.pri[i])
    work.detach(i)
    work.specs[i] = dataclasses.replace(work.specs[i], disk_template=DiskTemplate.DRBD)
    work.attach(i, primary, NO_NODE)
    work.detach(i)
    group = int(work.group[primary])
    cands = np.asarray(
        [n for n in work.group_nodes(group).tolist() if not work.offline[n] and n != primary],
        dtype=np.int64,
    )
    base = ScoreBase(work, work.group_nodes(group))
    soft = not options.ignore_soft_errors
    choice = best_secondary(work, i, primary, cands, base, soft, replace=False)
    if not isinstance(choice, Choice):
        return Outcome(False, no_good_node(work, choice), [])
    return Outcome(True, "success", work.node_names[choice.secondary])
