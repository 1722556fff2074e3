"""Cluster members kept in memory between decisions, valid while their revision holds.

Reading a cluster's members is most of what a shrink decision costs: about a
second at 100,000 members, while ranking them takes milliseconds. A process
(each engine, each API worker) keeps the member tables it read, labelled with
the cluster's member revision (store/member_revisions.py), and for each request:

* reads the revision (one primary-key lookup); unchanged, the table it holds is
  the answer;
* a few revisions behind, reads only the members those revisions name and
  patches a new table (:meth:`MemberTable.patched`);
* otherwise (never read, evicted, far behind, or a revision that rewrote most
  members) reads every member, as before.

The revision is read before the members, so a table is never older than its
label: a decision sees every member change committed before it began, as a full
read would. Tables are shared and never changed; the least recently used are
dropped beyond ``budget`` members in all.

``AUDIT`` compares every answer with a full read made at the same revision and
raises on any difference: a writer that forgot to bump the revision fails the
tests that exercise it. The test suite turns it on, in its own process and (through
the environment variable ``HERD_MEMBER_CACHE_AUDIT=1``, a diagnostic switch rather
than a setting) in every ``herd`` process it starts. It doubles the cost of every
decision: never in production.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session

from herd.policies.members import MemberChanges, MemberTable
from herd.store import member_revisions

#: session.info key under which a Database's sessions carry its cache
SESSION_KEY = "herd.member_cache"
#: Patch when at most this share of the members changed (else read them all).
PATCH_SHARE = 0.25

#: Compare every answer with a full read (the test suite turns this on).
AUDIT = os.environ.get("HERD_MEMBER_CACHE_AUDIT") == "1"

Reader = Callable[..., MemberTable]
#: ``(session, cluster_id, since, limit)``: what changed in the members after ``since``
#: (None: more than ``limit`` changes, or every member)
ChangeReader = Callable[[Session, str, int, int], MemberChanges | None]


@dataclass(frozen=True, slots=True)
class _Held:
    revision: int
    table: MemberTable


@dataclass
class CacheCounts:
    """What the cache did, for tests and benchmarks."""

    hits: int = 0
    patches: int = 0
    reads: int = 0


class MemberCache:
    """Member tables per cluster, least recently used first out beyond ``budget`` members.

    Owned by its ``Database`` (one per process and database), shared by every thread that
    reads members. Lock discipline: ``_lock`` guards ``_held``, ``_members`` and ``counts``;
    it is never held while reading the database, so two threads may read the same cluster
    at once (the later table stored wins; both are right for their revision).
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.counts = CacheCounts()
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._members = 0
        self._lock = threading.Lock()

    def members(
        self,
        session: Session,
        cluster_id: str,
        read: Reader,
        read_changes: ChangeReader,
        known: tuple[int, int] | None = None,
    ) -> MemberTable:
        """The cluster's members as of now, from memory where the revision allows.

        ``read(session, cluster_id)`` reads every member from the database;
        ``read_changes(session, cluster_id, revision, limit)`` those written after a
        revision (up to ``limit`` of them). ``known``: the cluster's member revision and
        horizon, if the caller read them in this transaction already (before any member).
        """
        revision, horizon = known or member_revisions.revision_of(session, cluster_id)
        held = self._get(cluster_id)
        table: MemberTable | None = None
        if held is not None and held.revision == revision:
            table = held.table
            self._count("hits")
        elif held is not None and horizon <= held.revision < revision:
            limit = max(64, int(PATCH_SHARE * len(held.table)))
            changes = read_changes(session, cluster_id, held.revision, limit)
            table = held.table.updated(changes) if changes is not None else None
            if table is not None:
                self._count("patches")
        if table is None:
            table = read(session, cluster_id)
            self._count("reads")
        if table is not (held.table if held else None):
            self._put(cluster_id, revision, table)
        if AUDIT:
            _audit(session, cluster_id, revision, table, read)
        return table

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self.counts, what, getattr(self.counts, what) + 1)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._members = 0

    def _get(self, cluster_id: str) -> _Held | None:
        with self._lock:
            held = self._held.get(cluster_id)
            if held is not None:
                self._held.move_to_end(cluster_id)
            return held

    def _put(self, cluster_id: str, revision: int, table: MemberTable) -> None:
        with self._lock:
            old = self._held.pop(cluster_id, None)
            if old is not None:
                self._members -= len(old.table)
            if len(table) > self.budget:
                return
            self._held[cluster_id] = _Held(revision, table)
            self._members += len(table)
            while self._members > self.budget:
                _, dropped = self._held.popitem(last=False)
                self._members -= len(dropped.table)


def of(session: Session) -> MemberCache | None:
    """The member cache of the Database that made ``session`` (None: none)."""
    cache = session.info.get(SESSION_KEY)
    return cache if isinstance(cache, MemberCache) and cache.budget > 0 else None


def _audit(
    session: Session, cluster_id: str, revision: int, table: MemberTable, read: Reader
) -> None:
    fresh = read(session, cluster_id)
    if member_revisions.revision_of(session, cluster_id)[0] != revision:
        return  # the members moved on meanwhile: the full read is no verdict
    if fresh.lists != table.lists or not _same_columns(fresh, table):
        raise AssertionError(
            f"member cache of cluster {cluster_id} at revision {revision} differs from the "
            "database: a node writer did not bump the member revision"
        )


def _same_columns(a: MemberTable, b: MemberTable) -> bool:
    one, other = a.columns, b.columns
    return all(
        np.array_equal(getattr(one, name), getattr(other, name), equal_nan=name.endswith("_at"))
        for name in ("index", "bucket", "created_at", "profile_created_at", "deletion_cost")
    ) and np.array_equal(one.protected, other.protected)
