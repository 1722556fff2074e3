"""A cluster's status from its members: Senlin's ``eval_status``, told truthfully.

Senlin counted ACTIVE members against the cluster's sizes and nothing else, so a
cluster whose members were all ERROR but outnumbered ``desired_capacity`` said
ACTIVE, and a WARNING's reason never said which members were wrong. herd keeps
Senlin's order and texts and adds three things (docs/api.md, "Differences"):

* a cluster is ACTIVE only when every member is ACTIVE (and the sizes hold); a
  member in any other status makes it at least WARNING;
* the reason of a WARNING or an ERROR names how many members are not ACTIVE and
  in which statuses, e.g. ``1 of 3 nodes not ACTIVE (1 ERROR).``;
* a cluster that wants members (``desired_capacity`` > 0) and has no ACTIVE one is
  ERROR whatever its ``min_size``: none of it works (issue 24), e.g. its only
  member crash-loops. Senlin said ERROR only below ``min_size``, which is 0 by
  default. An ERROR cluster still takes a profile update (the fix for members
  that crash on start; ``api/services/clusters.py``), where Senlin refused any
  update of a cluster in ERROR.
"""

from __future__ import annotations

from collections.abc import Mapping

from herd.types import ClusterStatus, NodeStatus


def not_active_note(statuses: Mapping[str, int]) -> str:
    """``"2 of 3 nodes not ACTIVE (1 ERROR, 1 RECOVERING)."``, or "" when all are ACTIVE."""
    total = sum(statuses.values())
    others = {
        str(status): count
        for status, count in statuses.items()
        if count and status != NodeStatus.ACTIVE
    }
    if not others:
        return ""
    wrong = sum(others.values())
    detail = ", ".join(f"{count} {status}" for status, count in sorted(others.items()))
    noun = "node" if total == 1 else "nodes"
    return f"{wrong} of {total} {noun} not ACTIVE ({detail})."


def cluster_status_after(
    op_name: str,
    statuses: Mapping[str, int],
    min_size: int,
    desired: int,
    max_size: int,
) -> tuple[ClusterStatus, str]:
    """The cluster's status and reason after an operation or a health check.

    Args:
        op_name: The reason's prefix: the action name (CLUSTER_SCALE_IN) or
            HEALTH_CHECK for the health manager's marks.
        statuses: How many members are in each node status.
        min_size: The cluster's min_size after the operation.
        desired: The desired capacity after the operation.
        max_size: The max_size after the operation (-1: unbounded).

    Returns:
        The new status and its reason text (Senlin's, with the members' note).
    """
    active = int(statuses.get(NodeStatus.ACTIVE, 0))
    note = not_active_note(statuses)
    prefix = f"{op_name}: number of active nodes is"
    if active < min_size:
        return ClusterStatus.ERROR, _join(f"{prefix} below min_size ({min_size}).", note)
    if active == 0 and desired > 0:
        empty = "" if sum(statuses.values()) else " The cluster has no members."
        reason = f"{op_name}: no node is ACTIVE (desired_capacity {desired}).{empty}"
        return ClusterStatus.ERROR, _join(reason, note)
    if active < desired:
        return ClusterStatus.WARNING, _join(f"{prefix} below desired_capacity ({desired}).", note)
    if 0 <= max_size < active:
        return ClusterStatus.WARNING, _join(f"{prefix} above max_size ({max_size}).", note)
    if note:
        return ClusterStatus.WARNING, f"{op_name}: {note}"
    return ClusterStatus.ACTIVE, f"{prefix} equal or above desired_capacity ({desired})."


def _join(reason: str, note: str) -> str:
    return f"{reason} {note}" if note else reason
