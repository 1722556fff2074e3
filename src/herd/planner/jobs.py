"""Opcodes and job dependencies.

hail emits one independent job per instance, but Ganeti runs jobs in
parallel, so a move into a node may run before the move that frees room
there. herd adds relative ``depends`` (``[[-k, ["success"]]]``) so that, in
every order Ganeti may run the jobs, each node stays within what the plan
checked. The model used here is shared with :mod:`herd.planner.check`:

* a job *adds* to a node, at its peak, the resources its steps bring there,
  and *releases* what it takes away only when it has finished;
* while job J runs, every job it depends on (transitively) has finished and
  every job that depends on J has not started; any other job may have added
  its resources but released nothing;
* a node must stay within ``capacity`` = max(room before the plan, the peak
  of running the whole plan one job after another).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState, FloatArray, uses_memory
from herd.planner.model import InstanceSpec

RESOURCES = ("memory", "disk", "spindles", "vcpus")


def replace_disks_op(instance: str, node: str) -> dict[str, object]:
    return {
        "OP_ID": "OP_INSTANCE_REPLACE_DISKS",
        "instance_name": instance,
        "early_release": False,
        "ignore_ipolicy": False,
        "mode": "replace_new_secondary",
        "disks": [],
        "remote_node": node,
    }


def migrate_op(spec: InstanceSpec, target: str | None) -> dict[str, object]:
    """A migration, or a failover for forthcoming instances (as hail)."""
    target_field = {} if target is None else {"target_node": target}
    if spec.forthcoming:
        return {
            "OP_ID": "OP_INSTANCE_FAILOVER",
            "instance_name": spec.name,
            **target_field,
            "shutdown_timeout": 120,
            "ignore_consistency": False,
            "ignore_ipolicy": False,
            "cleanup": False,
        }
    return {
        "OP_ID": "OP_INSTANCE_MIGRATE",
        "instance_name": spec.name,
        **target_field,
        "allow_runtime_changes": False,
        "ignore_ipolicy": False,
        "cleanup": False,
        "allow_failover": True,
        "ignore_hvversions": True,
    }


def usage(spec: InstanceSpec, primary: bool) -> FloatArray:
    """Resources an instance uses on a node as primary or as secondary."""
    local = spec.disk_template.uses_local_disk
    disk = float(spec.disk_space_total) if local else 0.0
    spindles = float(spec.spindle_use) if local else 0.0
    if not primary:
        return np.asarray([0.0, disk, spindles, 0.0])
    memory = float(spec.memory) if uses_memory(spec) else 0.0
    vcpus = float(spec.vcpus) if spec.admin_state.value != "offline" else 0.0
    return np.asarray([memory, disk, spindles, vcpus])


@dataclass
class JobEffect:
    """What one job does to nodes: peak additions, final releases, resyncs."""

    adds: dict[int, FloatArray]
    releases: dict[int, FloatArray]
    resync_nodes: frozenset[int]


def job_effect(spec: InstanceSpec, placements: list[tuple[int, int]]) -> JobEffect:
    """Effect of a job whose opcodes take the instance through ``placements``.

    ``placements[0]`` is the (primary, secondary) before the job, each later
    item the placement after one opcode.
    """

    def holding(placement: tuple[int, int]) -> dict[int, FloatArray]:
        primary, secondary = placement
        held = {primary: usage(spec, True)}
        if secondary != NO_NODE:
            held[secondary] = held.get(secondary, np.zeros(4)) + usage(spec, False)
        return held

    start = holding(placements[0])
    peak: dict[int, FloatArray] = {}
    resync: set[int] = set()
    previous = start
    for before, after in itertools.pairwise(placements):
        current = holding(after)
        # Inside one opcode the new copy exists before the old one is gone.
        for node in set(previous) | set(current):
            held = np.maximum(previous.get(node, np.zeros(4)), current.get(node, np.zeros(4)))
            extra = held - start.get(node, np.zeros(4))
            peak[node] = np.maximum(peak.get(node, np.zeros(4)), extra)
        if after[1] != before[1] and after[0] == before[0] and after[1] != NO_NODE:
            resync.update({after[0], after[1]})
        previous = current
    final = previous
    adds = {n: v for n, v in peak.items() if (v > 0).any()}
    releases = {}
    for node, held in start.items():
        gone = held - final.get(node, np.zeros(4))
        if (gone > 0).any():
            releases[node] = np.maximum(gone, 0.0)
    return JobEffect(adds, releases, frozenset(resync))


def node_room(state: ClusterState) -> FloatArray:
    """Room per node and resource before the plan: (nodes, 4)."""
    return np.stack(
        [
            state.unallocated,
            state.f_dsk,
            state.hi_spindles - state.inst_spindles,
            state.vcpu_ratio * state.t_cpu - state.u_cpu,
        ],
        axis=1,
    )


def sequential_peaks(effects: list[JobEffect], nodes: int) -> FloatArray:
    """Peak extra use per node when the jobs run one after another."""
    level = np.zeros((nodes, 4))
    peak = np.zeros((nodes, 4))
    for effect in effects:
        for node, add in effect.adds.items():
            peak[node] = np.maximum(peak[node], level[node] + add)
        for node, add in effect.adds.items():
            level[node] += add
        for node, rel in effect.releases.items():
            level[node] -= rel
    return peak


class DependencyModel:
    """Transitive job order plus the per-node bounds described above."""

    def __init__(self, effects: list[JobEffect], capacity: FloatArray, max_resyncs: int) -> None:
        self.effects = effects
        self.capacity = capacity
        self.max_resyncs = max_resyncs
        self.before: list[int] = []  # bitmask of jobs that finish before job k starts
        self.touching: dict[int, list[int]] = {}
        self.resyncing: dict[int, list[int]] = {}

    def comes_after(self, later: int, earlier: int) -> bool:
        return bool((self.before[later] >> earlier) & 1)

    def bound(self, job: int, node: int, upto: int) -> FloatArray:
        """Worst extra use of ``node`` while ``job`` runs, among jobs ``< upto``."""
        total = np.zeros(4)
        for other in self.touching.get(node, []):
            if other >= upto:
                continue
            effect = self.effects[other]
            if other == job or not self.comes_after(other, job):
                total += effect.adds.get(node, 0.0)
            if other != job and self.comes_after(job, other):
                total -= effect.releases.get(node, 0.0)
        return total

    def violations(self, job: int, upto: int) -> list[tuple[int, int]]:
        """(node, job whose bound breaks) pairs after adding ``job``."""
        found = []
        effect = self.effects[job]
        for node in effect.adds:
            for other in self.touching.get(node, []):
                if other >= upto or node not in self.effects[other].adds:
                    continue
                if other != job and self.comes_after(job, other):
                    continue
                if (self.bound(other, node, upto) > self.capacity[node] + 1e-6).any():
                    found.append((node, other))
        for node in effect.resync_nodes:
            group = [k for k in self.resyncing.get(node, []) if k < upto]
            for other in group:
                parallel = sum(
                    1
                    for k in group
                    if k != other
                    and not self.comes_after(k, other)
                    and not self.comes_after(other, k)
                )
                if parallel + 1 > self.max_resyncs:
                    found.append((node, other))
        return found

    def register(self, job: int) -> None:
        self.before.append(0)
        effect = self.effects[job]
        for node in set(effect.adds) | set(effect.releases) | effect.resync_nodes:
            self.touching.setdefault(node, []).append(job)
        for node in self.effects[job].resync_nodes:
            self.resyncing.setdefault(node, []).append(job)

    def depend(self, job: int, on: int) -> None:
        self.before[job] |= self.before[on] | (1 << on)


def build_dependencies(
    effects: list[JobEffect], capacity: FloatArray, max_resyncs: int
) -> list[list[int]]:
    """Choose, for each job, the earlier jobs it must wait for.

    Returns:
        For each job, the absolute indices of its direct dependencies.
    """
    model = DependencyModel(effects, capacity, max_resyncs)
    direct: list[list[int]] = []
    for job in range(len(effects)):
        model.register(job)
        deps: list[int] = []
        while True:
            target = _fix(model, job, model.violations(job, job + 1))
            if target is None:
                # Nothing left to wait for: the node is already sequential.
                break
            deps.append(target)
            model.depend(job, target)
        direct.append(sorted(set(deps)))
    return direct


def _fix(model: DependencyModel, job: int, broken: list[tuple[int, int]]) -> int | None:
    """The earlier job that ``job`` should wait for to cure one violation."""
    for node, other in broken:
        if other != job and not model.comes_after(job, other):
            return other
        latest = _latest_unordered(model, job, node)
        if latest is not None:
            return latest
    return None


def _latest_unordered(model: DependencyModel, job: int, node: int) -> int | None:
    for other in reversed(model.touching.get(node, [])):
        if other < job and not model.comes_after(job, other):
            return other
    return None


def attach_depends(jobs: list[list[dict[str, object]]], direct: list[list[int]]) -> None:
    """Put relative ``depends`` on the first opcode of each job."""
    for index, (job, deps) in enumerate(zip(jobs, direct, strict=True)):
        if deps and job:
            first = job[0]
            relative = [[dep - index, ["success"]] for dep in deps]
            job[0] = {"OP_ID": first["OP_ID"], "depends": relative} | {
                k: v for k, v in first.items() if k != "OP_ID"
            }
