"""What a batch of rows refers to, in one query per kind: the API's views show these beside
each row (member ids, attached policies, profile and policy names, action dependencies)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from herd.store.models import BindingRow, ClusterRow, DependencyRow, NodeRow, PolicyRow, ProfileRow


def profile_names(session: Session, ids: Collection[str]) -> dict[str, str]:
    if not ids:
        return {}
    query = select(ProfileRow.id, ProfileRow.name).where(ProfileRow.id.in_(list(ids)))
    return {pid: name for pid, name in session.execute(query)}


def cluster_names(session: Session, ids: Collection[str]) -> dict[str, str]:
    if not ids:
        return {}
    query = select(ClusterRow.id, ClusterRow.name).where(ClusterRow.id.in_(list(ids)))
    return {cid: name for cid, name in session.execute(query)}


def policy_names_and_types(session: Session, ids: Collection[str]) -> dict[str, tuple[str, str]]:
    if not ids:
        return {}
    query = select(PolicyRow.id, PolicyRow.name, PolicyRow.type).where(PolicyRow.id.in_(list(ids)))
    return {pid: (name, ptype) for pid, name, ptype in session.execute(query)}


def cluster_members(session: Session, cluster_ids: Collection[str]) -> defaultdict[str, list[str]]:
    """Each cluster's member ids, by index (none: an empty list)."""
    members: defaultdict[str, list[str]] = defaultdict(list)
    if cluster_ids:
        query = (
            select(NodeRow.id, NodeRow.cluster_id)
            .where(NodeRow.cluster_id.in_(list(cluster_ids)))
            .order_by(NodeRow.index, NodeRow.id)
        )
        for node_id, cluster_id in session.execute(query):
            members[str(cluster_id)].append(node_id)
    return members


def cluster_member_counts(session: Session, cluster_ids: Collection[str]) -> dict[str, int]:
    """How many members each cluster has (one grouped count, no ids carried)."""
    counts = dict.fromkeys(cluster_ids, 0)
    if cluster_ids:
        query = (
            select(NodeRow.cluster_id, func.count())
            .where(NodeRow.cluster_id.in_(list(cluster_ids)))
            .group_by(NodeRow.cluster_id)
        )
        for cluster_id, count in session.execute(query):
            counts[str(cluster_id)] = int(count)
    return counts


def cluster_policy_ids(
    session: Session, cluster_ids: Collection[str]
) -> defaultdict[str, list[str]]:
    """Each cluster's attached policy ids, in the order they run (none: an empty list)."""
    policies: defaultdict[str, list[str]] = defaultdict(list)
    if cluster_ids:
        query = (
            select(BindingRow.policy_id, BindingRow.cluster_id)
            .where(BindingRow.cluster_id.in_(list(cluster_ids)))
            .order_by(BindingRow.priority, BindingRow.id)
        )
        for policy_id, cluster_id in session.execute(query):
            policies[cluster_id].append(policy_id)
    return policies


def action_dependencies(
    session: Session, action_ids: Collection[str]
) -> tuple[defaultdict[str, list[str]], defaultdict[str, list[str]]]:
    """(what each action depends on, what depends on each action; none: an empty list)."""
    on: defaultdict[str, list[str]] = defaultdict(list)
    by: defaultdict[str, list[str]] = defaultdict(list)
    if action_ids:
        ids = list(action_ids)
        query = select(DependencyRow.depended, DependencyRow.dependent).where(
            DependencyRow.dependent.in_(ids) | DependencyRow.depended.in_(ids)
        )
        for depended, dependent in session.execute(query):
            on[dependent].append(depended)
            by[depended].append(dependent)
    return on, by


def action_dependencies_cut(
    session: Session, action_ids: Collection[str], keep: int
) -> tuple[dict[str, tuple[list[str], int]], dict[str, tuple[list[str], int]]]:
    """:func:`action_dependencies` with at most ``keep`` ids a side, and each side's full count.

    A creation of 100,000 members depends on 100,000 children: a summary counts them in the
    index and reads the first ``keep`` (in the order they were stored), never the 100,000 rows.
    """
    on: dict[str, tuple[list[str], int]] = {}
    by: dict[str, tuple[list[str], int]] = {}
    if not action_ids:
        return on, by
    ids = list(action_ids)
    for side, mine, other in (
        (on, DependencyRow.dependent, DependencyRow.depended),
        (by, DependencyRow.depended, DependencyRow.dependent),
    ):
        counts = select(mine, func.count()).where(mine.in_(ids)).group_by(mine)
        for action_id, count in session.execute(counts):
            side[action_id] = ([], int(count))
        short = [action_id for action_id, (_, count) in side.items() if count <= keep]
        query = select(mine, other).where(mine.in_(short)).order_by(DependencyRow.id)
        for action_id, other_id in session.execute(query) if short else ():
            side[action_id][0].append(other_id)
        for action_id in side.keys() - set(short):
            first = select(other).where(mine == action_id).order_by(DependencyRow.id).limit(keep)
            side[action_id][0].extend(session.scalars(first))
    return on, by
