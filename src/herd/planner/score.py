"""Ganeti's cluster score (ganeti.md 4.2), vectorised and incremental.

The score is a weighted sum of population standard deviations of per-node
ratios (over online nodes) plus weighted sums of penalties. A standard
deviation only needs the sum and the sum of squares of its values, so the
score of a state that differs from a base state on a few nodes is computed
from the base sums plus per-node deltas, for thousands of candidate nodes or
node pairs at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from herd.planner.cluster import ClusterState, FloatArray, IntArray

# Rows of the standard-deviation matrix and their weights. hail's "forth"
# variants of disk, vcpu and spindles equal the plain terms unless
# forthcoming instances exist, so their weights are folded in. Its forth
# memory differs as soon as an instance is down: it counts every primary.
STD_TERMS = (
    ("free_mem", 0.5),
    ("forth_free_mem", 0.5),
    ("free_disk", 1.0),
    ("reserved_mem", 1.0),
    ("vcpu_ratio", 1.0),
    ("primary_load", 3.0),  # cpu, mem and net load: primary instance counts
    ("disk_load", 1.0),  # primaries plus secondaries
    ("spindles", 1.0),
)
STD_WEIGHTS = np.asarray([w for _, w in STD_TERMS], dtype=np.float64)
ROW_RESERVED = 3


#: the largest magnitude of a scored ratio: the request's figures are at most 2^53
#: (``request_schema.LIMIT``), so a ratio over a denominator of 1 or more never reaches it.
#: Positive denominators below 1 (5e-268 CPUs, a disk of 1e-300 MiB: meaningless but finite)
#: would make ratios past 1e300 whose squares overflow to inf, and inf - inf is nan in the
#: sums; held at this bound such a node still scores as the worst, and squares summed over
#: any number of nodes stay finite.
RATIO_LIMIT = float(2**53)


def _ratio(num: FloatArray, den: FloatArray, empty: float) -> FloatArray:
    """``num / den`` where ``den > 0`` (else ``empty``), within +-:data:`RATIO_LIMIT`.

    The denominator is raised to ``|num| / RATIO_LIMIT`` where it is smaller, so the
    division itself never overflows (and needs no ``np.errstate``)."""
    out = np.full(np.broadcast(num, den).shape, empty, dtype=np.float64)
    floor = np.abs(num) / RATIO_LIMIT
    np.divide(num, np.maximum(den, floor), out=out, where=den > 0)
    return out


@dataclass
class NodeFigures:
    """Per-node raw figures that the score is computed from (any shape)."""

    unallocated: FloatArray
    forth_free: FloatArray
    t_mem: FloatArray
    f_dsk: FloatArray
    t_dsk: FloatArray
    r_mem: FloatArray
    u_cpu: FloatArray
    t_cpu: FloatArray
    pcnt: FloatArray
    scnt: FloatArray
    inst_spindles: FloatArray
    hi_spindles: FloatArray
    f_spindles: FloatArray
    t_spindles: FloatArray
    exclusive: FloatArray
    tag_score: FloatArray
    loc_cost: FloatArray
    offline: FloatArray

    @classmethod
    def of(cls, state: ClusterState, nodes: IntArray) -> NodeFigures:
        return cls(
            unallocated=state.unallocated[nodes],
            forth_free=state.forth_free[nodes],
            t_mem=state.t_mem[nodes],
            f_dsk=state.f_dsk[nodes],
            t_dsk=state.t_dsk[nodes],
            r_mem=state.r_mem[nodes],
            u_cpu=state.u_cpu[nodes],
            t_cpu=state.t_cpu[nodes],
            pcnt=state.pcnt[nodes],
            scnt=state.scnt[nodes],
            inst_spindles=state.inst_spindles[nodes],
            hi_spindles=state.hi_spindles[nodes],
            f_spindles=state.f_spindles[nodes],
            t_spindles=state.t_spindles[nodes],
            exclusive=state.exclusive[nodes].astype(np.float64),
            tag_score=state.tag_score[nodes],
            loc_cost=state.loc_cost[nodes],
            offline=state.offline[nodes].astype(np.float64),
        )

    def std_rows(self) -> FloatArray:
        """Stack of the values whose spread is scored: shape (terms, *nodes)."""
        rows = [
            _ratio(self.unallocated, self.t_mem, 0.0),
            _ratio(self.forth_free, self.t_mem, 0.0),
            # With exclusive storage hail's disk figure is free spindles.
            np.where(
                self.exclusive > 0,
                _ratio(self.f_spindles, self.t_spindles, 1.0),
                _ratio(self.f_dsk, self.t_dsk, 1.0),
            ),
            _ratio(self.r_mem, self.t_mem, 0.0),
            _ratio(self.u_cpu, self.t_cpu, 0.0),
            self.pcnt + 0.0 * self.scnt,
            self.pcnt + self.scnt,
            # ... and its spindle load is zero (calcSpindleUse).
            (1.0 - self.exclusive) * _ratio(self.inst_spindles, self.hi_spindles, 0.0),
        ]
        return np.stack(np.broadcast_arrays(*rows))

    def penalties(self) -> FloatArray:
        """Weighted sum terms per node (N+1, tags, location, offline load)."""
        online = 1.0 - self.offline
        count = self.pcnt + self.scnt
        fail_n1 = (self.unallocated <= self.r_mem).astype(np.float64)
        result: FloatArray = (
            online * (fail_n1 * count + 0.25 * _ratio(self.r_mem, self.t_mem, 0.0))
            + 2.0 * self.tag_score
            + self.loc_cost
            + self.offline * (4.0 * count + 16.0 * self.pcnt)
        )
        return result


class ScoreBase:
    """Sums over a scope of nodes, so that nearby states score in O(changed nodes)."""

    def __init__(self, state: ClusterState, scope: IntArray) -> None:
        self.scope = scope
        figures = NodeFigures.of(state, scope)
        online = figures.offline == 0.0
        rows = figures.std_rows()
        self.online_count = max(int(online.sum()), 1)
        self.sum1 = (rows * online).sum(axis=1)
        self.sum2 = (rows * rows * online).sum(axis=1)
        self.penalty = float(figures.penalties().sum())
        self.location_exclusion = state.location_exclusion_score(scope)
        self.position = np.full(len(state.node_names), -1, dtype=np.int64)
        self.position[scope] = np.arange(scope.size, dtype=np.int64)
        self._rows = rows
        self._penalties = figures.penalties()
        self._online = online

    def value(self) -> float:
        return float(self.evaluate(np.zeros_like(self.sum1), np.zeros_like(self.sum1), 0.0))

    def old_columns(self, nodes: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Current std rows, penalties and online mask of ``nodes`` (must be in scope)."""
        idx = self.position[nodes]
        if (idx < 0).any():
            raise ValueError("node outside the scored scope")
        return self._rows[:, idx], self._penalties[idx], self._online[idx].astype(np.float64)

    def delta(self, nodes: IntArray, new: NodeFigures) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Changes to (sum1, sum2, penalty) if ``nodes`` took the ``new`` figures.

        ``nodes`` may have any shape; the result has shape (terms, *shape) for
        the sums and ``shape`` for the penalty, so candidates broadcast.
        """
        old_rows, old_pen, online = self.old_columns(nodes)
        new_rows = new.std_rows()
        extra_axes = new_rows.ndim - old_rows.ndim
        if extra_axes > 0:
            lead = (1,) * extra_axes
            old_rows = old_rows.reshape((old_rows.shape[0], *lead, *nodes.shape))
            old_pen = old_pen.reshape((*lead, *nodes.shape))
            online = online.reshape((*lead, *nodes.shape))
        d1 = (new_rows - old_rows) * online
        d2 = (new_rows * new_rows - old_rows * old_rows) * online
        return d1, d2, new.penalties() - old_pen

    def evaluate(
        self,
        d1: FloatArray,
        d2: FloatArray,
        dpen: FloatArray | float,
        extra: FloatArray | float = 0.0,
    ) -> FloatArray:
        """Score for the base plus deltas; broadcasts over candidate axes."""
        shape = (-1,) + (1,) * (d1.ndim - 1)
        n = float(self.online_count)
        s1 = self.sum1.reshape(shape) + d1
        s2 = self.sum2.reshape(shape) + d2
        variance = np.maximum(s2 / n - (s1 / n) ** 2, 0.0)
        std = np.sqrt(variance)
        weighted = (std * STD_WEIGHTS.reshape(shape)).sum(axis=0)
        result: FloatArray = weighted + self.penalty + dpen + self.location_exclusion + extra
        return result


def cluster_score(state: ClusterState, scope: IntArray | None = None) -> float:
    """Ganeti's cluster score of ``scope`` (default: every node).

    Args:
        state: the cluster.
        scope: node indices to score, e.g. one group.

    Returns:
        The score; lower is better.
    """
    nodes = np.arange(len(state.node_names)) if scope is None else scope
    return ScoreBase(state, nodes.astype(np.int64)).value()
