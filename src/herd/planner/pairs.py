"""Vectorised search for the best DRBD (primary, secondary) pair.

For a new instance (allocation) a pair only has to accept the primary and
the secondary. For an existing instance that changes both nodes, hail runs
a sequence of moves (ganeti.md 4.4, ``evacDrbdAllInner``) and its model
checks the state after each of them:

0. when the primary is offline, a failover to the secondary;
1. replace-disks to the future primary p ("Changing secondary to new
   primary"): p as a secondary, then the current primary re-added (hard);
2. a failover to p ("Failing over to new primary"): p as the primary, then
   the current primary as p's secondary, even though its load does not grow;
3. replace-disks to the final secondary s ("Changing secondary to final
   secondary").

Steps 0 to 2 depend on p only, step 3 on (p, s). A pair is feasible when all
four pass; hail keeps the best-scoring one, and on failure reports the
first failing step of the *last* pair it tried.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from herd.planner.cluster import ClusterState, FloatArray, IntArray
from herd.planner.constraints import (
    OK,
    FailMode,
    code_of,
    mode_of,
    primary_failures,
    secondary_failures,
)
from herd.planner.moves import failover_failures, replace_secondary_failures, soft_checks
from herd.planner.score import ScoreBase
from herd.planner.search import (
    Choice,
    counter,
    last_argmin,
    location_exclusion_delta,
    primary_figures,
    secondary_figures,
    shared_locations,
)

INTERNAL_CODE = code_of(FailMode.INTERNAL)

# Above this many node pairs, only the most promising primaries are paired
# first; the others are tried only if none of those works.
MAX_PAIRS = 4_096

STEP_INITIAL_FAILOVER = "Failing over to the secondary"
STEP_NEW_PRIMARY_AS_SECONDARY = "Changing secondary to new primary"
STEP_FAILOVER_TO_NEW_PRIMARY = "Failing over to new primary"
STEP_FINAL_SECONDARY = "Changing secondary to final secondary"


@dataclass(frozen=True)
class PairPath:
    """Where an existing DRBD instance starts from.

    Attributes:
        primary: its primary when it is detached from the cluster.
        secondary: its secondary.
    """

    primary: int
    secondary: int

    def initial_failover(self, state: ClusterState) -> bool:
        return bool(state.offline[self.primary])

    def replacing_from(self, state: ClusterState) -> tuple[int, int]:
        """(primary, secondary) when the first replace-disks starts."""
        if self.initial_failover(state):
            return self.secondary, self.primary
        return self.primary, self.secondary


@dataclass(frozen=True)
class PairFailure:
    """Why no node pair worked, with hail's step names."""

    step: str
    mode: FailMode
    modes: Counter[FailMode]


@dataclass(frozen=True)
class _PrimarySteps:
    """Per-candidate outcome of everything that depends on the primary only."""

    codes: IntArray  # first failure of steps 1-2 (allocation: the primary check)
    steps: list[str]  # step name per candidate failure
    secondary_soft: bool


def _primary_steps(
    state: ClusterState, i: int, cands: IntArray, soft: bool, path: PairPath | None
) -> _PrimarySteps:
    if path is None:
        codes = primary_failures(state, i, cands, soft)
        return _PrimarySteps(codes, [STEP_FAILOVER_TO_NEW_PRIMARY] * cands.size, soft)
    current, left = path.replacing_from(state)
    step1 = replace_secondary_failures(state, i, current, cands, soft_checks(state, left, not soft))
    later_soft = soft_checks(state, current, not soft)
    step2 = failover_failures(state, i, current, cands, later_soft)
    names = [
        STEP_NEW_PRIMARY_AS_SECONDARY if one != OK else STEP_FAILOVER_TO_NEW_PRIMARY
        for one in step1.tolist()
    ]
    return _PrimarySteps(np.where(step1 != OK, step1, step2), names, later_soft)


def best_pair(
    state: ClusterState,
    i: int,
    cands: IntArray,
    base: ScoreBase,
    soft: bool,
    path: PairPath | None = None,
) -> Choice | PairFailure | None:
    """Best (primary, secondary) pair of distinct candidates for a DRBD instance.

    Args:
        state: the cluster with ``i`` detached.
        i: the instance.
        cands: candidate nodes in file order.
        base: the score scope.
        soft: whether soft checks apply at all (not ``--ignore-soft-errors``).
        path: where an existing instance comes from; None for an allocation.

    Returns:
        The choice, a :class:`PairFailure`, or None when fewer than two
        candidates exist.
    """
    if cands.size < 2:
        return None
    pairs = cands.size * (cands.size - 1)
    if path is not None and path.initial_failover(state):
        target = np.asarray([path.secondary], dtype=np.int64)
        code = int(failover_failures(state, i, path.primary, target, False)[0])
        if not code and state.offline[path.secondary]:
            # hail would fail over to a drained secondary; Ganeti's LU refuses.
            code = code_of(FailMode.MEM)
        if code:
            mode = mode_of(code)
            return PairFailure(STEP_INITIAL_FAILOVER, mode, Counter({mode: pairs}))
    first = _primary_steps(state, i, cands, soft, path)
    pri_ok = first.codes == OK
    pri_scores = np.full(cands.shape, np.inf)
    d1p = d2p = penp = np.zeros(0)
    if pri_ok.any():
        d1p, d2p, penp = base.delta(cands, primary_figures(state, i, cands))
        pri_scores = np.where(pri_ok, base.evaluate(d1p, d2p, penp), np.inf)
    for batch in _batches(np.flatnonzero(pri_ok), pri_scores, cands.size):
        scores, _ = _score_rows(state, i, cands, base, batch, (d1p, d2p, penp), first)
        if np.isfinite(scores).any():
            best = last_argmin(scores)
            row, col = divmod(best, cands.size)
            return Choice(
                int(cands[batch[row]]),
                int(cands[col]),
                float(scores[row, col]),
                int(np.isfinite(scores).sum()),
            )
    return _failure(state, i, cands, first)


def _batches(rows: IntArray, pri_scores: FloatArray, count: int) -> Iterator[IntArray]:
    """Feasible primaries to pair: the best ones first, the others only if needed."""
    limit = max(16, MAX_PAIRS // count)
    if rows.size <= limit:
        if rows.size:
            yield rows
        return
    best_rows = np.sort(rows[np.argsort(pri_scores[rows], kind="stable")[:limit]])
    yield best_rows
    rest = np.setdiff1d(rows, best_rows)
    yield from np.array_split(rest, max(1, rest.size // limit))


def _score_rows(
    state: ClusterState,
    i: int,
    cands: IntArray,
    base: ScoreBase,
    rows: IntArray,
    primary_delta: tuple[FloatArray, FloatArray, FloatArray],
    first: _PrimarySteps,
) -> tuple[FloatArray, IntArray]:
    """Scores (inf where infeasible) and final-secondary codes of the pairs in ``rows``."""
    primaries = cands[rows]
    p_col = primaries.reshape(-1, 1)
    sec_codes = secondary_failures(state, i, cands, p_col, first.secondary_soft)
    sec_codes = np.where(p_col == cands.reshape(1, -1), INTERNAL_CODE, sec_codes)
    ok = sec_codes == OK
    if not ok.any():
        return np.full(sec_codes.shape, np.inf), sec_codes
    d1p, d2p, penp = (a[..., rows] for a in primary_delta)
    d1s, d2s, pens = base.delta(cands, secondary_figures(state, i, cands, p_col))
    if pens.ndim == 1:
        # Without an N+1 reservation the secondary's figures ignore the primary.
        d1s, d2s, pens = d1s[:, None, :], d2s[:, None, :], pens[None, :]
    extra = shared_locations(state, p_col, cands.reshape(1, -1))
    extra = extra + location_exclusion_delta(state, i, base, primaries).reshape(-1, 1)
    scores = base.evaluate(
        d1p[:, :, None] + d1s, d2p[:, :, None] + d2s, penp[:, None] + pens, extra
    )
    return np.where(ok, scores, np.inf), sec_codes


def _failure(state: ClusterState, i: int, cands: IntArray, first: _PrimarySteps) -> PairFailure:
    """hail's report: the last pair's first failing step; counts over every pair."""
    everywhere = np.arange(cands.size)
    p_col = cands.reshape(-1, 1)
    sec_codes = secondary_failures(state, i, cands, p_col, first.secondary_soft)
    codes = np.where(first.codes.reshape(-1, 1) != OK, first.codes.reshape(-1, 1), sec_codes)
    distinct = everywhere.reshape(-1, 1) != everywhere.reshape(1, -1)
    modes = counter(codes, distinct)
    last_p, last_s = cands.size - 1, cands.size - 2
    code = int(codes[last_p, last_s])
    step = first.steps[last_p] if first.codes[last_p] != OK else STEP_FINAL_SECONDARY
    return PairFailure(step, mode_of(code) if code else FailMode.INTERNAL, modes)
