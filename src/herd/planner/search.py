"""Vectorised search for the best node, secondary or node pair of one instance.

The state given to these functions has the instance detached. Candidates are
scored together through :class:`ScoreBase`; infeasible ones get an infinite
score. Exact ties go to the *last* candidate in file order, as in hail.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState, FloatArray, IntArray, reserves_memory
from herd.planner.cluster import uses_memory as _uses_memory
from herd.planner.constraints import (
    OK,
    FailMode,
    mode_of,
    peer_memory,
    secondary_failures,
)
from herd.planner.moves import migrate_to_failures, replace_secondary_failures
from herd.planner.score import NodeFigures, ScoreBase


@dataclass(frozen=True)
class Choice:
    """The best placement found: nodes and the score of ``scope`` after it."""

    primary: int
    secondary: int
    score: float
    successes: int


@dataclass(frozen=True)
class NoChoice:
    """Every candidate failed; ``per_node`` is set for single-node searches."""

    modes: Counter[FailMode]
    per_node: tuple[tuple[int, FailMode], ...] = ()
    no_candidates: bool = False


def last_argmin(scores: FloatArray) -> int:
    flat = scores.ravel()
    return int(flat.size - 1 - np.argmin(flat[::-1]))


def _tag_delta(state: ClusterState, i: int, nodes: IntArray) -> FloatArray:
    tags = state.inst_excl[i]
    if not tags:
        return np.zeros(nodes.shape)
    values = [sum(1.0 for t in tags if state.excl_counts[n][t] > 0) for n in nodes.ravel().tolist()]
    return np.asarray(values).reshape(nodes.shape)


def location_exclusion_delta(
    state: ClusterState, i: int, base: ScoreBase, nodes: IntArray
) -> FloatArray:
    tags = state.inst_excl[i]
    if not tags or not state.rules.location_prefixes:
        return np.zeros(nodes.shape)
    present: set[tuple[str, str]] = set()
    for node in base.scope.tolist():
        for location in state.node_locations[node]:
            present.update((location, t) for t in state.excl_counts[node])
    values = [
        sum(1.0 for loc in state.node_locations[n] for t in tags if (loc, t) in present)
        for n in nodes.ravel().tolist()
    ]
    return np.asarray(values).reshape(nodes.shape)


def _disk_spindles(state: ClusterState, i: int, nodes: IntArray) -> FloatArray:
    """Spindles the instance's disks take on exclusive-storage nodes (as attach)."""
    need = float(state.specs[i].disk_spindles or 0)
    result: FloatArray = np.where(state.exclusive[nodes], need, 0.0)
    return result


def primary_figures(state: ClusterState, i: int, nodes: IntArray) -> NodeFigures:
    """Figures of ``nodes`` if each became ``i``'s primary (secondary ignored)."""
    spec = state.specs[i]
    figures = NodeFigures.of(state, nodes)
    memory = float(spec.memory) if _uses_memory(spec) else 0.0
    figures.unallocated = figures.unallocated - memory
    figures.forth_free = figures.forth_free - float(spec.memory)
    figures.f_dsk = figures.f_dsk - state.local_disk(i)
    if spec.admin_state.value != "offline":
        figures.u_cpu = figures.u_cpu + spec.vcpus
    figures.pcnt = figures.pcnt + 1
    figures.inst_spindles = figures.inst_spindles + state.local_spindles(i)
    figures.f_spindles = figures.f_spindles - _disk_spindles(state, i, nodes)
    figures.tag_score = figures.tag_score + _tag_delta(state, i, nodes)
    desired = state.inst_desired[i]
    if desired:
        unmet = [len(desired - state.node_tags[n]) for n in nodes.ravel().tolist()]
        figures.loc_cost = figures.loc_cost + np.asarray(unmet, dtype=np.float64)
    return figures


def secondary_figures(
    state: ClusterState, i: int, nodes: IntArray, primaries: IntArray
) -> NodeFigures:
    """Figures of ``nodes`` as ``i``'s secondary, paired with ``primaries`` (broadcast)."""
    spec = state.specs[i]
    figures = NodeFigures.of(state, nodes)
    figures.f_dsk = figures.f_dsk - state.local_disk(i)
    figures.scnt = figures.scnt + 1
    figures.inst_spindles = figures.inst_spindles + state.local_spindles(i)
    figures.f_spindles = figures.f_spindles - _disk_spindles(state, i, nodes)
    if reserves_memory(spec):
        peer = peer_memory(state, nodes, primaries)
        figures.r_mem = np.maximum(figures.r_mem, peer + spec.memory)
    return figures


def shared_locations(state: ClusterState, primaries: IntArray, secondaries: IntArray) -> FloatArray:
    shape = np.broadcast_shapes(primaries.shape, secondaries.shape)
    if not state.rules.location_prefixes:
        return np.zeros(shape)
    p_b = np.broadcast_to(primaries, shape).ravel().tolist()
    s_b = np.broadcast_to(secondaries, shape).ravel().tolist()
    shared = [
        len(state.node_locations[p] & state.node_locations[s])
        for p, s in zip(p_b, s_b, strict=True)
    ]
    return np.asarray(shared, dtype=np.float64).reshape(shape)


def best_single(
    state: ClusterState,
    i: int,
    cands: IntArray,
    base: ScoreBase,
    soft: bool,
    secondary: int = NO_NODE,
    migrate_from: int = NO_NODE,
) -> Choice | NoChoice:
    """Best new primary among ``cands`` (shared storage, plain allocation)."""
    if cands.size == 0:
        return NoChoice(Counter(), no_candidates=True)
    codes = migrate_to_failures(state, i, migrate_from, cands, soft)
    ok = codes == OK
    if not ok.any():
        return _no_choice(cands, codes)
    figures = primary_figures(state, i, cands)
    d1, d2, dpen = base.delta(cands, figures)
    extra = location_exclusion_delta(state, i, base, cands)
    scores = np.where(ok, base.evaluate(d1, d2, dpen, extra), np.inf)
    best = last_argmin(scores)
    return Choice(int(cands[best]), secondary, float(scores[best]), int(ok.sum()))


def best_secondary(
    state: ClusterState,
    i: int,
    primary: int,
    cands: IntArray,
    base: ScoreBase,
    soft: bool,
    replace: bool = True,
) -> Choice | NoChoice:
    """Best new DRBD secondary for ``i`` whose primary stays ``primary``.

    With ``replace`` (a replace-disks of an existing instance) the primary
    must also pass hail's forced re-add; without it (a secondary for an
    instance being converted) only the secondary is checked.
    """
    if cands.size == 0:
        return NoChoice(Counter(), no_candidates=True)
    prim = np.asarray([primary], dtype=np.int64)
    if replace:
        codes = replace_secondary_failures(state, i, primary, cands, soft)
    else:
        codes = secondary_failures(state, i, cands, prim, soft)
    ok = codes == OK
    if not ok.any():
        return _no_choice(cands, codes)
    d1, d2, dpen = base.delta(cands, secondary_figures(state, i, cands, prim))
    # The state has ``i`` detached from its primary too, where it stays: add
    # it back, since the spread terms do not add up node by node.
    d1p, d2p, penp = base.delta(prim, primary_figures(state, i, prim))
    extra = shared_locations(state, prim, cands) + location_exclusion_delta(state, i, base, prim)
    scores = base.evaluate(d1 + d1p, d2 + d2p, dpen + penp, extra)
    scores = np.where(ok, scores, np.inf)
    best = last_argmin(scores)
    return Choice(primary, int(cands[best]), float(scores[best]), int(ok.sum()))


def counter(codes: IntArray, mask: np.ndarray) -> Counter[FailMode]:
    """How many of the masked codes fail, per failure mode."""
    values, counts = np.unique(codes[mask & (codes != OK)], return_counts=True)
    return Counter({mode_of(int(v)): int(c) for v, c in zip(values, counts, strict=True)})


def _no_choice(cands: IntArray, codes: IntArray) -> NoChoice:
    per_node = tuple(
        (int(n), mode_of(int(c))) for n, c in zip(cands.tolist(), codes.tolist(), strict=True)
    )
    return NoChoice(counter(codes, np.ones(codes.shape, dtype=np.bool_)), per_node)
