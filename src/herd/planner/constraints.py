"""Placement checks of hail's ``Node.addPriEx``/``addSecEx`` (ganeti.md 4.3).

Every check works on a state from which the instance has been detached, and
on an array of candidate nodes at once. The result is an array of failure
codes: 0 means the node accepts the instance, ``k`` means ``FAIL_MODES[k-1]``.
The first failing check wins, in hail's order. "Soft" checks are skipped with
``soft=False`` (``--ignore-soft-errors``, or the node being left is offline).
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from herd.planner.cluster import (
    NO_NODE,
    ClusterState,
    FloatArray,
    IntArray,
    reserves_memory,
    uses_memory,
)
from herd.planner.model import AdminState, InstanceSpec, IPolicy


class FailMode(StrEnum):
    MEM = "FailMem"
    DISK = "FailDisk"
    CPU = "FailCPU"
    N1 = "FailN1"
    TAGS = "FailTags"
    MIG = "FailMig"
    DISK_COUNT = "FailDiskCount"
    SPINDLES = "FailSpindles"
    INTERNAL = "FailInternal"


FAIL_MODES = tuple(FailMode)
OK = 0


def code_of(mode: FailMode) -> int:
    return FAIL_MODES.index(mode) + 1


def mode_of(code: int) -> FailMode:
    return FAIL_MODES[code - 1]


def _mark(codes: IntArray, failing: np.ndarray, mode: FailMode) -> None:
    np.copyto(codes, code_of(mode), where=(codes == OK) & failing)


def primary_failures(state: ClusterState, i: int, cands: IntArray, soft: bool) -> IntArray:
    """Why each candidate cannot become instance ``i``'s primary (0 = it can)."""
    spec = state.specs[i]
    codes = np.zeros(cands.shape, dtype=np.int64)
    memory = float(spec.memory) if uses_memory(spec) else 0.0
    unallocated = state.unallocated[cands]
    new_free = unallocated - memory
    # hail refuses any primary on a node left with no free memory, even an
    # instance that uses none (down) or a forced re-add that changes nothing;
    # forthcoming instances skip the real-resource checks.
    if not spec.forthcoming:
        _mark(codes, new_free <= 0, FailMode.MEM)
    disk = state.local_disk(i)
    if spec.disk_template.uses_local_disk:
        _mark(codes, state.f_dsk[cands] - disk <= 0, FailMode.DISK)
        _spindle_checks(state, spec, cands, codes, soft, i)
    if soft:
        r_mem = state.r_mem[cands]
        _mark(codes, (new_free <= r_mem) & ~(unallocated <= r_mem), FailMode.MEM)
        # The ratio is checked on the node's load after the add, so a node
        # already over it refuses even an offline instance (no vcpus added). A
        # node of 0 CPUs refuses any load, as hail's infinite ratio does (its 0/0,
        # NaN, passes: so does 0 > 0 here).
        vcpus = spec.vcpus if spec.admin_state is not AdminState.OFFLINE else 0
        over = (state.u_cpu[cands] + vcpus) > state.vcpu_ratio[cands] * state.t_cpu[cands]
        _mark(codes, over, FailMode.CPU)
        tags = state.inst_excl[i]
        if tags:
            clash = np.asarray(
                [any(state.excl_counts[n][t] > 0 for t in tags) for n in cands.ravel().tolist()],
                dtype=np.bool_,
            ).reshape(cands.shape)
            _mark(codes, clash, FailMode.TAGS)
        if not spec.forthcoming:
            # hail's forthcoming limits, checked for every instance when
            # strict: room for the memory of all primaries, running or not.
            _mark(codes, state.forth_free[cands] - spec.memory <= 0, FailMode.MEM)
    return codes


def _spindle_checks(
    state: ClusterState, spec: InstanceSpec, cands: IntArray, codes: IntArray, soft: bool, i: int
) -> None:
    exclusive = state.exclusive[cands]
    if exclusive.any():
        need = spec.disk_spindles
        short = (
            np.ones(cands.shape, dtype=np.bool_)
            if need is None
            else (state.f_spindles[cands] - need < 0)
        )
        _mark(codes, exclusive & short, FailMode.SPINDLES)
    if soft:
        over = state.inst_spindles[cands] + state.local_spindles(i) > state.hi_spindles[cands]
        _mark(codes, over & ~exclusive, FailMode.DISK)


def secondary_failures(
    state: ClusterState,
    i: int,
    cands: IntArray,
    primaries: IntArray,
    soft: bool,
    ignore_disk: bool = False,
) -> IntArray:
    """Why each candidate cannot hold instance ``i``'s DRBD secondary.

    Args:
        state: the cluster with ``i`` detached.
        i: the instance.
        cands: candidate secondaries, shape (S,).
        primaries: the primary each candidate would pair with, any shape that
            broadcasts against (S,), e.g. (P, 1) for all pairs.
        soft: whether soft checks apply.
        ignore_disk: skip the free-disk check, as hail does for an offline
            primary that becomes the secondary in a failover.

    Returns:
        Failure codes of the broadcast shape.
    """
    spec = state.specs[i]
    shape = np.broadcast_shapes(cands.shape, primaries.shape)
    codes = np.zeros(shape, dtype=np.int64)
    if not spec.disk_template.is_drbd:
        codes[...] = code_of(FailMode.DISK)
        return codes
    if not ignore_disk:
        no_disk = state.f_dsk[cands] - state.local_disk(i) <= 0
        _mark(codes, np.broadcast_to(no_disk, shape), FailMode.DISK)
    flat = np.zeros(cands.shape, dtype=np.int64)
    _spindle_checks(state, spec, cands, flat, soft, i)
    flat_b = np.broadcast_to(flat, shape)
    np.copyto(codes, flat_b, where=(codes == OK) & (flat_b > 0))
    if soft:
        # An instance that reserves nothing (admin offline) still needs the
        # node to have some unallocated memory left: hail compares 0 >= free.
        needed = float(spec.memory) if reserves_memory(spec) else 0.0
        unallocated = state.unallocated[cands]
        r_mem = state.r_mem[cands]
        _mark(codes, np.broadcast_to(needed >= unallocated, shape), FailMode.MEM)
        peer = peer_memory(state, cands, primaries)
        new_r_mem = np.maximum(r_mem, peer + needed)
        becomes = (unallocated <= new_r_mem) & ~(unallocated <= r_mem)
        _mark(codes, becomes, FailMode.MEM)
        if not spec.forthcoming:
            forth = np.broadcast_to(needed >= state.forth_free[cands], shape)
            _mark(codes, forth, FailMode.MEM)
    return codes


def peer_memory(state: ClusterState, secondaries: IntArray, primaries: IntArray) -> FloatArray:
    """Memory that each secondary already reserves for each primary (broadcast)."""
    shape = np.broadcast_shapes(secondaries.shape, primaries.shape)
    if state.peer_matrix is not None:
        dense: FloatArray = state.peer_matrix[secondaries, primaries].astype(np.float64)
        return np.broadcast_to(dense, shape)
    keys: list[int] = []
    values: list[float] = []
    count = len(state.node_names) + 1
    for s in np.unique(secondaries).tolist():
        for p, memory in state.peers[s].items():
            keys.append(s * count + p)
            values.append(memory)
    if not keys:
        return np.zeros(shape)
    order = np.argsort(np.asarray(keys, dtype=np.int64))
    sorted_keys = np.asarray(keys, dtype=np.int64)[order]
    sorted_values = np.asarray(values, dtype=np.float64)[order]
    wanted = np.broadcast_to(secondaries, shape) * count + np.broadcast_to(primaries, shape)
    position = np.minimum(np.searchsorted(sorted_keys, wanted), sorted_keys.size - 1)
    found = sorted_keys[position] == wanted
    result: FloatArray = np.where(found, sorted_values[position], 0.0)
    return result


def migration_allowed(state: ClusterState, source: int, targets: IntArray) -> np.ndarray:
    """hail's migration tags: the target must carry every migration tag of the source."""
    if source == NO_NODE or not state.rules.migration_prefixes:
        return np.ones(targets.shape, dtype=np.bool_)
    needed = state.node_migration_tags[source]
    allowed = state.rules.allowed_migrations
    result = []
    for target in targets.ravel().tolist():
        have = state.node_migration_tags[target]
        missing = [t for t in needed if t not in have]
        result.append(all(any((t, h) in allowed for h in have) for t in missing))
    return np.asarray(result, dtype=np.bool_).reshape(targets.shape)


def ipolicy_violation(spec: InstanceSpec, policy: IPolicy) -> tuple[FailMode, str] | None:
    """Check an instance against a group's ipolicy (allocation and group choice only)."""
    if policy.disk_templates and spec.disk_template.value not in policy.disk_templates:
        return FailMode.DISK, f"disk template {spec.disk_template.value} is not allowed"
    if not policy.minmax:
        return None
    values = {
        "memory-size": (spec.memory, FailMode.MEM),
        "cpu-count": (spec.vcpus, FailMode.CPU),
        "disk-count": (len(spec.disk_sizes), FailMode.DISK_COUNT),
        "spindle-use": (spec.spindle_use, FailMode.SPINDLES),
    }
    reason: tuple[FailMode, str] | None = None
    for low, high in policy.minmax:
        reason = None
        for key, (value, mode) in values.items():
            attr = key.replace("-", "_")
            lo, hi = getattr(low, attr), getattr(high, attr)
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                reason = (mode, f"{key} {value} outside [{lo}, {hi}]")
                break
        if reason is None:
            for size in spec.disk_sizes:
                if (low.disk_size is not None and size < low.disk_size) or (
                    high.disk_size is not None and size > high.disk_size
                ):
                    reason = (
                        FailMode.DISK,
                        f"disk-size {size} outside [{low.disk_size}, {high.disk_size}]",
                    )
                    break
        if reason is None:
            return None
    return reason
