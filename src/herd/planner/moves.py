"""Ganeti's instance moves and what its model refuses at each one.

Every opcode herd emits is one of hail's moves (``Cluster/Moves.hs``
``applyMoveEx``), and Ganeti's model checks each of them on its own, so the
state after *every* opcode of a job has to pass, not only the final one:

* ``FAILOVER`` (DRBD, a migrate without target): migration tags between the
  two nodes; the secondary becomes the primary (``addPriEx``); the old
  primary becomes the secondary (``addSecExEx``). The old primary is checked
  even though its load does not grow: a node over its spindle limit refuses
  to take the instance back as a secondary (FailDisk).
* ``MIGRATE_TO`` (shared storage, a migrate with ``target_node``): migration
  tags, then the target as the new primary.
* ``REPLACE_SECONDARY`` (replace-disks): the new node as the secondary, then
  the primary is re-added *with force*: only its hard limits apply, and a
  node with no free memory or disk left refuses even though nothing grows.

Soft checks (spindle ratio, vcpu ratio, N+1, exclusion tags) are skipped
with ``--ignore-soft-errors`` and whenever the node being left is offline.
The planner calls the vectorised functions for every candidate at once;
``herd iallocator check`` replays an answer through :func:`refusal`, which is
built from the same functions, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from herd.planner.cluster import NO_NODE, ClusterState, IntArray
from herd.planner.constraints import (
    OK,
    FailMode,
    code_of,
    migration_allowed,
    mode_of,
    primary_failures,
    secondary_failures,
)

MIG_CODE = code_of(FailMode.MIG)


class StepKind(StrEnum):
    FAILOVER = "failover"  # DRBD: swap primary and secondary
    MIGRATE_TO = "migrate_to"  # shared storage: new primary
    REPLACE_SECONDARY = "replace_secondary"  # DRBD: new secondary


class Role(StrEnum):
    """Which node of a move refused it; the value reads with the node's name."""

    MIGRATION = "migration tags towards {node}"
    NEW_PRIMARY = "{node} as the new primary"
    NEW_SECONDARY = "{node} as the new secondary"
    OLD_PRIMARY_AS_SECONDARY = "the old primary {node} taking the secondary back"
    KEPT_PRIMARY = "re-adding the primary {node}"


def soft_checks(state: ClusterState, left: int, ignore_soft_errors: bool) -> bool:
    """Whether a move leaving node ``left`` gets the soft checks (hail's ``force``)."""
    return not ignore_soft_errors and not (left != NO_NODE and bool(state.offline[left]))


def _first(codes: IntArray, more: IntArray) -> IntArray:
    """Keep the first failure: ``more`` only counts where ``codes`` passed."""
    result: IntArray = np.where(codes == OK, more, codes)
    return result


def failover_failures(
    state: ClusterState, i: int, old_primary: int, new_primaries: IntArray, soft: bool
) -> IntArray:
    """Refusals of a DRBD failover from ``old_primary`` to each of ``new_primaries``.

    ``state`` has ``i`` detached. In a plain failover ``new_primaries`` is the
    current secondary; in hail's "all" sequence it is every candidate that
    has just become the secondary.
    """
    codes = np.where(migration_allowed(state, old_primary, new_primaries), OK, MIG_CODE)
    codes = _first(codes, primary_failures(state, i, new_primaries, soft))
    back = np.asarray([old_primary], dtype=np.int64)
    # hail ignores the disk of an offline old primary (it cannot report any).
    as_secondary = secondary_failures(
        state, i, back, new_primaries, soft, ignore_disk=bool(state.offline[old_primary])
    )
    return _first(codes, as_secondary)


def migrate_to_failures(
    state: ClusterState, i: int, source: int, targets: IntArray, soft: bool
) -> IntArray:
    """Refusals of moving a shared-storage instance from ``source`` to each target."""
    codes = np.where(migration_allowed(state, source, targets), OK, MIG_CODE)
    return _first(codes, primary_failures(state, i, targets, soft))


def kept_primary_failure(state: ClusterState, i: int, primary: int) -> int:
    """Hard refusal of re-adding ``i`` to its primary after a replace-disks (0 = none)."""
    return int(primary_failures(state, i, np.asarray([primary], dtype=np.int64), False)[0])


def replace_secondary_failures(
    state: ClusterState, i: int, primary: int, cands: IntArray, soft: bool
) -> IntArray:
    """Refusals of replacing ``i``'s secondary with each candidate."""
    codes = secondary_failures(state, i, cands, np.asarray([primary], dtype=np.int64), soft)
    return _first(codes, np.full(cands.shape, kept_primary_failure(state, i, primary)))


@dataclass(frozen=True)
class Refusal:
    """Why Ganeti's model refuses one move."""

    mode: FailMode
    node: int
    role: Role

    def describe(self, state: ClusterState) -> str:
        return self.role.value.format(node=state.node_names[self.node])


def _scalar(codes: IntArray) -> int:
    return int(codes.ravel()[0])


def refusal(
    state: ClusterState,
    i: int,
    kind: StepKind,
    old: tuple[int, int],
    target: int,
    soft: bool,
) -> Refusal | None:
    """The first check that refuses one move of ``i`` (None when it is accepted).

    Args:
        state: the cluster with ``i`` detached.
        i: the instance.
        kind: the move.
        old: (primary, secondary) before the move.
        target: the new primary (MIGRATE_TO) or secondary (REPLACE_SECONDARY);
            ignored for FAILOVER.
        soft: whether soft checks apply (see :func:`soft_checks`).

    Returns:
        The refusal, built from the same checks the planner runs, in hail's order.
    """
    primary, secondary = old
    if kind is StepKind.FAILOVER:
        one = np.asarray([secondary], dtype=np.int64)
        if not migration_allowed(state, primary, one)[0]:
            return Refusal(FailMode.MIG, secondary, Role.MIGRATION)
        code = _scalar(primary_failures(state, i, one, soft))
        if code:
            return Refusal(mode_of(code), secondary, Role.NEW_PRIMARY)
        code = _scalar(failover_failures(state, i, primary, one, soft))
        return Refusal(mode_of(code), primary, Role.OLD_PRIMARY_AS_SECONDARY) if code else None
    one = np.asarray([target], dtype=np.int64)
    if kind is StepKind.MIGRATE_TO:
        if not migration_allowed(state, primary, one)[0]:
            return Refusal(FailMode.MIG, target, Role.MIGRATION)
        code = _scalar(primary_failures(state, i, one, soft))
        return Refusal(mode_of(code), target, Role.NEW_PRIMARY) if code else None
    code = _scalar(secondary_failures(state, i, one, np.asarray([primary]), soft))
    if code:
        return Refusal(mode_of(code), target, Role.NEW_SECONDARY)
    code = kept_primary_failure(state, i, primary)
    return Refusal(mode_of(code), primary, Role.KEPT_PRIMARY) if code else None
