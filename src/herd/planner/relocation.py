"""node-evacuate and change-group planning (ganeti.md 4.4 and 4.5).

Instances are planned one after another in request order on a simulated
cluster that already holds the earlier moves, as hail does. What differs
from hail is listed in docs/iallocator.md ("Deliberate differences").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState, IntArray
from herd.planner.constraints import (
    FailMode,
    code_of,
    ipolicy_violation,
    mode_of,
)
from herd.planner.model import (
    AllocPolicy,
    ChangeGroupRequest,
    DiskTemplate,
    EvacMode,
    NodeEvacuateRequest,
    PlannerOptions,
)
from herd.planner.moves import StepKind, failover_failures, refusal, soft_checks
from herd.planner.pairs import PairFailure, PairPath, best_pair
from herd.planner.score import ScoreBase
from herd.planner.search import Choice, NoChoice, best_secondary, best_single

# Texts of failures that several modules emit.
NODE_LIST_LIMIT = 12


@dataclass(frozen=True)
class Step:
    kind: StepKind
    node: int = NO_NODE


@dataclass(frozen=True)
class Relocation:
    """One moved instance: where it ends and the opcode steps to get there."""

    instance: int
    group: int
    old_nodes: tuple[int, int]
    new_nodes: tuple[int, int]
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Failure:
    instance: int
    reason: str


@dataclass
class Plan:
    """Result of a relocation request, in request order."""

    relocations: list[Relocation] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    state: ClusterState | None = None


def _cannot_relocate(template: DiskTemplate) -> str:
    return f"Instances of type {template.value} cannot be relocated"


def no_good_node(state: ClusterState, result: NoChoice) -> str:
    """hail's text, shortened (with a per-mode count) when the group is large."""
    parts = [f" Node {state.node_names[n]} failed: {m.value};" for n, m in result.per_node]
    text = "Can't find any good node: " + "".join(parts[:NODE_LIST_LIMIT])
    if len(parts) > NODE_LIST_LIMIT:
        summary = ", ".join(f"{m.value}: {c}" for m, c in sorted(result.modes.items()))
        text += f" ... and {len(parts) - NODE_LIST_LIMIT} more nodes ({summary})"
    return text


def _pair_text(result: PairFailure | None) -> str:
    prefix = "Can't find any good nodes for relocation: "
    if result is None:
        return prefix + "no nodes available"
    return prefix + f"Allocation failed: {result.step}: {result.mode.value}"


def _candidates(state: ClusterState, group: int, excluded: set[int]) -> IntArray:
    nodes = state.group_nodes(group)
    keep = [n for n in nodes.tolist() if not state.offline[n] and n not in excluded]
    return np.asarray(keep, dtype=np.int64)


def _drbd_steps(old_primary: int, primary: int, secondary: int, state: ClusterState) -> list[Step]:
    steps = [Step(StepKind.FAILOVER)] if state.offline[old_primary] else []
    return [
        *steps,
        Step(StepKind.REPLACE_SECONDARY, primary),
        Step(StepKind.FAILOVER, primary),
        Step(StepKind.REPLACE_SECONDARY, secondary),
    ]


def _evacuated_nodes(state: ClusterState, request: NodeEvacuateRequest) -> set[int]:
    indices = [state.inst_index[name] for name in request.instances]
    primaries = {int(state.pri[i]) for i in indices}
    secondaries = {int(state.sec[i]) for i in indices if state.sec[i] != NO_NODE}
    if request.evac_mode is EvacMode.PRIMARY_ONLY:
        return primaries
    if request.evac_mode is EvacMode.SECONDARY_ONLY:
        return secondaries
    # herd: in "all" mode the evacuated node is the one every instance uses;
    # hail excludes every peer too, which can leave no candidates at all.
    common: set[int] | None = None
    for i in indices:
        nodes = {int(state.pri[i]), int(state.sec[i])} - {NO_NODE}
        common = nodes if common is None else common & nodes
    return common or (primaries | secondaries)


def node_evacuate(
    state: ClusterState, request: NodeEvacuateRequest, options: PlannerOptions
) -> Plan:
    """Plan a node-evacuate request on a copy of ``state``."""
    work = state.copy()
    plan = Plan(state=work)
    excluded = _evacuated_nodes(work, request)
    for name in request.instances:
        i = work.inst_index[name]
        outcome = _evacuate_one(work, i, request.evac_mode, excluded, options)
        if isinstance(outcome, str):
            plan.failures.append(Failure(i, outcome))
        else:
            plan.relocations.append(outcome)
    return plan


def _evacuate_one(
    state: ClusterState, i: int, mode: EvacMode, excluded: set[int], options: PlannerOptions
) -> Relocation | str:
    spec = state.specs[i]
    template = spec.disk_template
    old = (int(state.pri[i]), int(state.sec[i]))
    group = int(state.group[old[0]])
    if template in (DiskTemplate.PLAIN, DiskTemplate.FILE):
        return _cannot_relocate(template)
    if not template.is_movable:
        return "Can't relocate/evacuate non-mirrored instances"
    if template.is_externally_mirrored and mode is EvacMode.SECONDARY_ONLY:
        return f"Instances with disk template '{template.value}' can't execute change secondary"
    base_soft = not options.ignore_soft_errors
    if template.is_drbd and mode is EvacMode.PRIMARY_ONLY:
        return _failover(state, i, group, base_soft)
    cands = _candidates(state, group, excluded | {old[0], old[1]} - {NO_NODE})
    state.detach(i)
    base = ScoreBase(state, state.group_nodes(group))
    choice: Choice | NoChoice | PairFailure | None
    if template.is_externally_mirrored:
        soft = base_soft and not state.offline[old[0]]
        choice = best_single(state, i, cands, base, soft, migrate_from=old[0])
        steps = [Step(StepKind.MIGRATE_TO, choice.primary)] if isinstance(choice, Choice) else []
    elif mode is EvacMode.SECONDARY_ONLY:
        soft = base_soft and not state.offline[old[1]]
        choice = best_secondary(state, i, old[0], cands, base, soft)
        steps = (
            [Step(StepKind.REPLACE_SECONDARY, choice.secondary)]
            if isinstance(choice, Choice)
            else []
        )
    else:
        partial = _leave_one_node(state, i, old, excluded, cands, base, base_soft)
        if partial is not None:
            choice, steps = partial
        else:
            choice = best_pair(state, i, cands, base, base_soft, PairPath(*old))
            steps = (
                _drbd_steps(old[0], choice.primary, choice.secondary, state)
                if isinstance(choice, Choice)
                else []
            )
    if not isinstance(choice, Choice):
        state.attach(i, *old)
        if isinstance(choice, NoChoice):
            return no_good_node(state, choice)
        return _pair_text(choice)
    state.attach(i, choice.primary, choice.secondary)
    return Relocation(i, group, old, (choice.primary, choice.secondary), tuple(steps))


def _leave_one_node(
    state: ClusterState,
    i: int,
    old: tuple[int, int],
    excluded: set[int],
    cands: IntArray,
    base: ScoreBase,
    base_soft: bool,
) -> tuple[Choice, list[Step]] | None:
    """herd's cheaper "all" evacuation when only one node of a DRBD pair is evacuated.

    Only the evacuated node is replaced: a new secondary (one resync) when the
    secondary is evacuated, or a failover plus a new secondary when the
    primary is. hail always moves both nodes (two resyncs). Returns None when
    this does not apply or finds nothing, so the full pair search runs.
    """
    primary, secondary = old
    if primary not in excluded and secondary in excluded and not state.offline[primary]:
        soft = base_soft and not state.offline[secondary]
        choice = best_secondary(state, i, primary, cands, base, soft)
        if isinstance(choice, Choice):
            return choice, [Step(StepKind.REPLACE_SECONDARY, choice.secondary)]
        return None
    if primary in excluded and secondary not in excluded and not state.offline[secondary]:
        # Both opcodes leave the old primary, so its state sets the softness.
        soft = soft_checks(state, primary, not base_soft)
        target = np.asarray([secondary], dtype=np.int64)
        if int(failover_failures(state, i, primary, target, soft)[0]):
            return None
        choice = best_secondary(state, i, secondary, cands, base, soft)
        if isinstance(choice, Choice):
            return choice, [
                Step(StepKind.FAILOVER),
                Step(StepKind.REPLACE_SECONDARY, choice.secondary),
            ]
    return None


def _failover(state: ClusterState, i: int, group: int, soft_default: bool) -> Relocation | str:
    old_primary, old_secondary = int(state.pri[i]), int(state.sec[i])
    if old_secondary == NO_NODE:
        return "Can't relocate/evacuate non-mirrored instances"
    soft = soft_checks(state, old_primary, not soft_default)
    state.detach(i)
    target = np.asarray([old_secondary], dtype=np.int64)
    code = int(failover_failures(state, i, old_primary, target, soft)[0])
    if not code and state.offline[old_secondary]:
        # hail would start it on a drained node; Ganeti's migration refuses.
        code = code_of(FailMode.MEM)
    if code:
        found = refusal(state, i, StepKind.FAILOVER, (old_primary, old_secondary), NO_NODE, soft)
        state.attach(i, old_primary, old_secondary)
        target_name = state.node_names[old_secondary]
        text = f"{mode_of(code).value}: cannot fail over to secondary node {target_name}"
        if found is None:
            return text + " (offline or drained)"
        if found.node != old_secondary:
            text += f" (Ganeti's model refuses {found.describe(state)})"
        return text
    state.attach(i, old_secondary, old_primary)
    return Relocation(
        i,
        group,
        (old_primary, old_secondary),
        (old_secondary, old_primary),
        (Step(StepKind.FAILOVER),),
    )


def _target_groups(state: ClusterState, request: ChangeGroupRequest) -> list[int]:
    by_key = {g.uuid: k for k, g in enumerate(state.groups)}
    by_key.update({g.name: k for k, g in enumerate(state.groups)})
    sources = {int(state.group[state.pri[state.inst_index[n]]]) for n in request.instances}
    if request.target_groups:
        wanted = [by_key[t] for t in request.target_groups if t in by_key]
    else:
        wanted = list(range(len(state.groups)))
    return [g for g in dict.fromkeys(wanted) if g not in sources and state.group_nodes(g).size]


def change_group(state: ClusterState, request: ChangeGroupRequest, options: PlannerOptions) -> Plan:
    """Plan a change-group request on a copy of ``state``."""
    work = state.copy()
    plan = Plan(state=work)
    targets = _target_groups(work, request)
    everything = np.arange(len(work.node_names), dtype=np.int64)
    for name in request.instances:
        i = work.inst_index[name]
        outcome = _change_one(work, i, targets, everything, options)
        if isinstance(outcome, str):
            plan.failures.append(Failure(i, outcome))
        else:
            plan.relocations.append(outcome)
    return plan


def _change_one(
    state: ClusterState, i: int, targets: list[int], everything: IntArray, options: PlannerOptions
) -> Relocation | str:
    spec = state.specs[i]
    template = spec.disk_template
    if template in (DiskTemplate.PLAIN, DiskTemplate.FILE):
        return _cannot_relocate(template)
    if not template.is_movable:
        return "Can't relocate/evacuate non-mirrored instances"
    usable = [g for g in targets if state.groups[g].alloc_policy is not AllocPolicy.UNALLOCABLE]
    if not usable:
        names = ", ".join(state.groups[g].name for g in targets) or "none"
        return f"no groups for evacuation: no allocable target group (candidates: {names})"
    old = (int(state.pri[i]), int(state.sec[i]))
    soft = not options.ignore_soft_errors
    state.detach(i)
    whole = ScoreBase(state, everything)
    best: tuple[int, float, int, Choice] | None = None
    messages: list[str] = []
    for g in usable:
        group = state.groups[g]
        label = f"Group {group.name} ({group.alloc_policy.wire_name})"
        violation = ipolicy_violation(spec, group.ipolicy)
        if violation is not None:
            messages.append(f"{label}: instance policy: {violation[1]} ({violation[0].value})")
            continue
        cands = _candidates(state, g, set())
        needed = 2 if template.is_drbd else 1
        if cands.size < needed:
            messages.append(f"Group {group.name}: error Not enough online nodes")
            continue
        base = ScoreBase(state, state.group_nodes(g))
        choice: Choice | NoChoice | PairFailure | None
        if template.is_drbd:
            choice = best_pair(state, i, cands, base, soft, PairPath(*old))
        else:
            soft_here = soft_checks(state, old[0], not soft)
            choice = best_single(state, i, cands, base, soft_here, migrate_from=old[0])
        if not isinstance(choice, Choice):
            modes: Counter[FailMode] = Counter()
            if isinstance(choice, NoChoice | PairFailure):
                modes = choice.modes
            reasons = ", ".join(f"{m.value}: {c}" for m, c in sorted(modes.items()))
            text = f"{label}: No valid allocation solutions, failure reasons: {reasons}"
            if isinstance(choice, PairFailure):
                # hail's wording for the step that stopped the last pair tried.
                text += f"; last pair: {choice.step}: {choice.mode.value}"
            messages.append(text)
            continue
        overall = _whole_score(state, i, whole, choice)
        key = (int(group.alloc_policy), overall)
        if best is None or key < (best[0], best[1]):
            best = (int(group.alloc_policy), overall, g, choice)
    if best is None:
        state.attach(i, *old)
        return ", ".join(messages)
    _, _, g, choice = best
    state.attach(i, choice.primary, choice.secondary)
    if template.is_drbd:
        steps = _drbd_steps(old[0], choice.primary, choice.secondary, state)
    else:
        steps = [Step(StepKind.MIGRATE_TO, choice.primary)]
    return Relocation(i, g, old, (choice.primary, choice.secondary), tuple(steps))


def _whole_score(state: ClusterState, i: int, whole: ScoreBase, choice: Choice) -> float:
    """Whole-cluster score if ``i`` landed on ``choice`` (hail ranks groups by it)."""
    from herd.planner.search import primary_figures, secondary_figures

    pri = np.asarray([choice.primary], dtype=np.int64)
    d1, d2, pen = whole.delta(pri, primary_figures(state, i, pri))
    if choice.secondary != NO_NODE:
        sec = np.asarray([choice.secondary], dtype=np.int64)
        s1, s2, spen = whole.delta(sec, secondary_figures(state, i, sec, pri))
        d1, d2, pen = d1 + s1, d2 + s2, pen + spen
    return float(whole.evaluate(d1, d2, pen)[0])
