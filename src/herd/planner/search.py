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
    code_of,
    migration_allowed,
    mode_of,
    peer_memory,
    primary_failures,
    secondary_failures,
)
from herd.planner.score import NodeFigures, ScoreBase

MIG_CODE = code_of(FailMode.MIG)
INTERNAL_CODE = code_of(FailMode.INTERNAL)

# Above this many node pairs, only the most promising primaries are paired.
MAX_PAIRS = 4_096


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


def _last_argmin(scores: FloatArray) -> int:
    flat = scores.ravel()
    return int(flat.size - 1 - np.argmin(flat[::-1]))


def _tag_delta(state: ClusterState, i: int, nodes: IntArray) -> FloatArray:
    tags = state.inst_excl[i]
    if not tags:
        return np.zeros(nodes.shape)
    values = [sum(1.0 for t in tags if state.excl_counts[n][t] > 0) for n in nodes.ravel().tolist()]
    return np.asarray(values).reshape(nodes.shape)


def _location_exclusion_delta(
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


def primary_figures(state: ClusterState, i: int, nodes: IntArray) -> NodeFigures:
    """Figures of ``nodes`` if each became ``i``'s primary (secondary ignored)."""
    spec = state.specs[i]
    figures = NodeFigures.of(state, nodes)
    memory = float(spec.memory) if _uses_memory(spec) else 0.0
    figures.unallocated = figures.unallocated - memory
    figures.f_dsk = figures.f_dsk - state.local_disk(i)
    if spec.admin_state.value != "offline":
        figures.u_cpu = figures.u_cpu + spec.vcpus
    figures.pcnt = figures.pcnt + 1
    figures.inst_spindles = figures.inst_spindles + state.local_spindles(i)
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
    if reserves_memory(spec):
        peer = peer_memory(state, nodes, primaries)
        figures.r_mem = np.maximum(figures.r_mem, peer + spec.memory)
    return figures


def _shared_locations(
    state: ClusterState, primaries: IntArray, secondaries: IntArray
) -> FloatArray:
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
    codes = primary_failures(state, i, cands, soft)
    allowed = migration_allowed(state, migrate_from, cands)
    codes = np.where((codes == OK) & ~allowed, MIG_CODE, codes)
    ok = codes == OK
    if not ok.any():
        return _no_choice(cands, codes)
    figures = primary_figures(state, i, cands)
    d1, d2, dpen = base.delta(cands, figures)
    extra = _location_exclusion_delta(state, i, base, cands)
    scores = np.where(ok, base.evaluate(d1, d2, dpen, extra), np.inf)
    best = _last_argmin(scores)
    return Choice(int(cands[best]), secondary, float(scores[best]), int(ok.sum()))


def best_secondary(
    state: ClusterState, i: int, primary: int, cands: IntArray, base: ScoreBase, soft: bool
) -> Choice | NoChoice:
    """Best new DRBD secondary for ``i`` whose primary stays ``primary``."""
    if cands.size == 0:
        return NoChoice(Counter(), no_candidates=True)
    prim = np.asarray([primary], dtype=np.int64)
    codes = secondary_failures(state, i, cands, prim, soft)
    ok = codes == OK
    if not ok.any():
        return _no_choice(cands, codes)
    figures = secondary_figures(state, i, cands, prim)
    d1, d2, dpen = base.delta(cands, figures)
    shared = _shared_locations(state, prim, cands)
    scores = np.where(ok, base.evaluate(d1, d2, dpen, shared), np.inf)
    best = _last_argmin(scores)
    return Choice(primary, int(cands[best]), float(scores[best]), int(ok.sum()))


@dataclass(frozen=True)
class PairFailure:
    """Why no node pair worked, with hail's step names."""

    step: str
    mode: FailMode
    modes: Counter[FailMode]


def best_pair(
    state: ClusterState,
    i: int,
    cands: IntArray,
    base: ScoreBase,
    soft: bool,
    migrate_from: int = NO_NODE,
) -> Choice | PairFailure | None:
    """Best (primary, secondary) pair of distinct candidates for a DRBD instance.

    Returns:
        The choice, a :class:`PairFailure`, or None when fewer than two
        candidates exist.
    """
    if cands.size < 2:
        return None
    pri_codes = primary_failures(state, i, cands, soft)
    allowed = migration_allowed(state, migrate_from, cands)
    pri_codes = np.where((pri_codes == OK) & ~allowed, MIG_CODE, pri_codes)
    # hail moves the future primary in as a secondary first.
    old_primary = np.asarray([migrate_from], dtype=np.int64)
    step1 = secondary_failures(state, i, cands, old_primary, soft)
    pri_ok = pri_codes == OK
    if not (step1 == OK).any():
        return _pair_failure("Changing secondary to new primary", step1, step1 != OK)
    if not pri_ok.any():
        return _pair_failure("Failing over to new primary", pri_codes, ~pri_ok)
    pri_figures = primary_figures(state, i, cands)
    d1p, d2p, penp = base.delta(cands, pri_figures)
    pri_scores = np.where(pri_ok & (step1 == OK), base.evaluate(d1p, d2p, penp), np.inf)
    primaries = cands[np.isfinite(pri_scores)]
    if primaries.size == 0:
        return _pair_failure("Changing secondary to new primary", step1, step1 != OK)
    limit = max(16, MAX_PAIRS // cands.size)
    if primaries.size > limit:
        order = np.argsort(pri_scores[np.isfinite(pri_scores)], kind="stable")[:limit]
        primaries = np.sort(primaries[order])
    p_col = primaries.reshape(-1, 1)
    sec_codes = secondary_failures(state, i, cands, p_col, soft)
    sec_codes = np.where(p_col == cands.reshape(1, -1), INTERNAL_CODE, sec_codes)
    ok = sec_codes == OK
    if not ok.any():
        distinct = p_col != cands.reshape(1, -1)
        return _pair_failure("Changing secondary to final secondary", sec_codes, distinct & ~ok)
    keep = np.isin(cands, primaries)
    d1p, d2p, penp = d1p[:, keep], d2p[:, keep], penp[keep]
    sec_figures = secondary_figures(state, i, cands, p_col)
    d1s, d2s, pens = base.delta(cands, sec_figures)
    extra = _shared_locations(state, p_col, cands.reshape(1, -1))
    extra = extra + _location_exclusion_delta(state, i, base, primaries).reshape(-1, 1)
    scores = base.evaluate(
        d1p[:, :, None] + d1s, d2p[:, :, None] + d2s, penp[:, None] + pens, extra
    )
    scores = np.where(ok, scores, np.inf)
    best = _last_argmin(scores)
    row, col = divmod(best, cands.size)
    return Choice(int(primaries[row]), int(cands[col]), float(scores[row, col]), int(ok.sum()))


def _counter(codes: IntArray, mask: np.ndarray) -> Counter[FailMode]:
    values, counts = np.unique(codes[mask & (codes != OK)], return_counts=True)
    return Counter({mode_of(int(v)): int(c) for v, c in zip(values, counts, strict=True)})


def _pair_failure(step: str, codes: IntArray, mask: np.ndarray) -> PairFailure:
    modes = _counter(codes, mask)
    failing = codes[mask & (codes != OK)]
    last = mode_of(int(failing[-1])) if failing.size else FailMode.INTERNAL
    return PairFailure(step, last, modes)


def _no_choice(cands: IntArray, codes: IntArray) -> NoChoice:
    per_node = tuple(
        (int(n), mode_of(int(c))) for n, c in zip(cands.tolist(), codes.tolist(), strict=True)
    )
    return NoChoice(_counter(codes, np.ones(codes.shape, dtype=np.bool_)), per_node)
