"""The member cache answers from memory only while the member revision says nothing changed.

Every writer of node rows is used from a second ``Database`` (another process, as far as
the cache can tell): the next read through the harness's database must see the change,
by a patch of the changed members where the log allows, and equal a full read. The suite
also runs with ``member_cache.AUDIT`` on, which checks the same for every decision of
every test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import event, select
from tests.functional.engine.harness import PROJECT, Harness

from herd.policies.members import MemberTable
from herd.policies.ranking import rank_victims
from herd.store import clusters as cluster_store
from herd.store import mark_batches, member_marks, member_revisions
from herd.store import nodes as node_store
from herd.store.database import Database
from herd.store.lookup import Scope
from herd.store.member_cache import CacheCounts
from herd.store.models import MemberChangeRow, NodeRow
from herd.store.snapshots import member_table, read_members
from herd.types import Criteria, HealthStatus, NodeStatus


@pytest.fixture
def other(db_url: str) -> Iterator[Database]:
    """A second Database on the same data, with a cache of its own: another process."""
    database = Database(db_url)
    yield database
    database.dispose()


def members(database: Database, cluster_id: str) -> MemberTable:
    with database.read() as session:
        return member_table(session, cluster_id)


def fresh(database: Database, cluster_id: str) -> MemberTable:
    with database.read() as session:
        return read_members(session, cluster_id)


def counts(database: Database) -> CacheCounts:
    return replace(database.member_cache.counts)


def health_of(table: MemberTable, node_id: str) -> str:
    return table.lists.health[table.lists.ids.index(node_id)]


def test_unchanged_members_come_from_memory(harness: Harness) -> None:
    cluster = harness.cluster(5)
    first = members(harness.db, cluster)
    before = counts(harness.db)
    again = members(harness.db, cluster)
    assert again is first
    assert counts(harness.db).hits == before.hits + 1
    assert len(again) == 5


def _orm_mark(database: Database, node: NodeRow) -> None:
    with database.write() as session:
        row = session.get(NodeRow, node.id)
        assert row is not None
        row.health = HealthStatus.CHECK_FAILED


def _api_mark(database: Database, node: NodeRow) -> None:
    with database.write() as session:
        connection = session.connection()
        assert node.cluster_id is not None
        ref = member_marks.find_cluster(connection, node.cluster_id, Scope(PROJECT, False))
        member = member_marks.find_member(connection, ref, node.id)
        values = list(member.values)
        values[member_marks.HEALTH] = HealthStatus.CHECK_FAILED
        values[member_marks.HEALTH_REASON], values[member_marks.MARKED_BY] = "test", "u"
        values[member_marks.MARKED_AT] = time.time()
        values[member_marks.GENERATION] = (values[member_marks.GENERATION] or 0) + 1
        mark_batches.write_health(session, {member.id: (ref.id, values)})


def _bulk_update(database: Database, node: NodeRow) -> None:
    with database.write() as session:
        node_store.update_many(
            session, [{"id": node.id, "status": NodeStatus.ERROR, "status_reason": "x"}]
        )


def _set_status(database: Database, node: NodeRow) -> None:
    with database.write() as session:
        node_store.set_status_many(session, [node.id], NodeStatus.WARNING, "x")


WRITERS: dict[str, Callable[[Database, NodeRow], None]] = {
    "orm": _orm_mark,
    "mark": _api_mark,
    "update_many": _bulk_update,
    "set_status_many": _set_status,
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_change_made_elsewhere_is_patched_in(
    harness: Harness, other: Database, writer: str
) -> None:
    cluster = harness.cluster(6)
    node = harness.nodes(cluster)[2]
    stale = members(harness.db, cluster)
    assert rank_victims(stale, 1, Criteria.OLDEST_FIRST, 0).node_ids != [node.id]
    WRITERS[writer](other, node)
    before = counts(harness.db)
    now = members(harness.db, cluster)
    assert counts(harness.db).patches == before.patches + 1
    assert now is not stale
    assert now.lists == fresh(harness.db, cluster).lists
    # The changed member is now the first victim (ERROR, WARNING or CHECK_FAILED rank first).
    assert rank_victims(now, 1, Criteria.OLDEST_FIRST, 0).node_ids == [node.id]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_state_change_is_patched_from_the_log_alone(
    harness: Harness, other: Database, writer: str
) -> None:
    cluster = harness.cluster(4)
    node = harness.nodes(cluster)[1]
    members(harness.db, cluster)
    WRITERS[writer](other, node)
    with other.read() as session:
        logged = session.execute(
            select(MemberChangeRow.node_ids, MemberChangeRow.fields).where(
                MemberChangeRow.cluster_id == cluster
            )
        ).all()
    assert (node.id, member_revisions.STATE) in logged
    read: list[str] = []
    me = threading.get_ident()

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        # This thread's (not the harness engine's), and not SQLite's BEGIN.
        if threading.get_ident() == me and statement.startswith("SELECT"):
            read.append(statement)

    event.listen(harness.db.read_engine, "before_cursor_execute", seen)
    try:
        before = counts(harness.db)
        now = members(harness.db, cluster)
        assert counts(harness.db).patches == before.patches + 1
    finally:
        event.remove(harness.db.read_engine, "before_cursor_execute", seen)
    assert now.lists == fresh(harness.db, cluster).lists
    # The revision, then the log, which carries the new status or health: no member row read
    # (the suite's member cache audit, when on, reads them all afterwards).
    assert len(read) >= 2 and not any("FROM nodes" in s for s in read[:2]), read
    assert "member_revisions" in read[0] and "member_changes" in read[1]


def test_writes_of_one_member_in_several_revisions_come_out_as_the_last_left_them(
    harness: Harness, other: Database
) -> None:
    cluster = harness.cluster(4)
    first, second, third, _ = harness.nodes(cluster)
    members(harness.db, cluster)
    _set_status(other, first)  # status, then health: both kept
    _api_mark(other, first)
    _api_mark(other, second)  # health, then the whole row: the row wins
    with other.write() as session:
        node_store.update_many(session, [{"id": second.id, "tainted": True}])
    _set_status(other, third)  # a state change, then another one of the same column
    with other.write() as session:
        node_store.set_status_many(session, [third.id], NodeStatus.ACTIVE, "back")
    before = counts(harness.db)
    now = members(harness.db, cluster)
    assert counts(harness.db).patches == before.patches + 1
    assert now.lists == fresh(harness.db, cluster).lists
    at = now.lists.ids.index
    assert now.lists.status[at(first.id)] == NodeStatus.WARNING
    assert now.lists.health[at(first.id)] == HealthStatus.CHECK_FAILED
    assert now.lists.tainted[at(second.id)] is True
    assert now.lists.status[at(third.id)] == NodeStatus.ACTIVE


def test_one_revision_logs_a_part_per_way_its_nodes_changed(
    harness: Harness, other: Database
) -> None:
    cluster = harness.cluster(5)
    nodes = harness.nodes(cluster)
    members(harness.db, cluster)
    with other.write() as session:
        node_store.set_status_many(session, [nodes[0].id, nodes[2].id], NodeStatus.ERROR, "x")
        node_store.set_status_many(session, [nodes[1].id], NodeStatus.WARNING, "y")
        node_store.update_many(session, [{"id": nodes[4].id, "tainted": True}])
    with other.read() as session:
        revision = member_revisions.revision_of(session, cluster)[0]
        logged = session.execute(
            select(
                MemberChangeRow.part,
                MemberChangeRow.fields,
                MemberChangeRow.status,
                MemberChangeRow.count,
                MemberChangeRow.node_ids,
            )
            .where(MemberChangeRow.cluster_id == cluster, MemberChangeRow.revision == revision)
            .order_by(MemberChangeRow.part)
        ).all()
    error = " ".join(sorted((nodes[0].id, nodes[2].id)))
    assert [tuple(row) for row in logged] == [
        (0, member_revisions.ROW, None, 1, nodes[4].id),
        (1, member_revisions.STATE, NodeStatus.ERROR, 2, error),
        (2, member_revisions.STATE, NodeStatus.WARNING, 1, nodes[1].id),
    ]
    before = counts(harness.db)
    now = members(harness.db, cluster)
    assert counts(harness.db).patches == before.patches + 1
    assert now.lists == fresh(harness.db, cluster).lists
    assert [now.lists.status[i] for i in (0, 1, 2, 3)] == [
        NodeStatus.ERROR, NodeStatus.WARNING, NodeStatus.ERROR, NodeStatus.ACTIVE
    ]  # fmt: skip
    assert now.lists.tainted[4] is True


def test_members_that_leave_and_join_are_patched(harness: Harness, other: Database) -> None:
    cluster = harness.cluster(6)
    nodes = harness.nodes(cluster)
    members(harness.db, cluster)
    with other.write() as session:
        node_store.delete_many(session, [nodes[0].id])
        node_store.leave_cluster_many(session, [nodes[3].id], "left", time.time())
        node_store.insert_many(
            session,
            [
                node_store.planned_values(
                    cluster_id=cluster,
                    profile_id=nodes[0].profile_id,
                    name="joined",
                    index=0,  # before every other member: the table is sorted again
                    placement=None,
                    user="u",
                    project=PROJECT,
                    now=time.time(),
                )
            ],
        )
    before = counts(harness.db)
    now = members(harness.db, cluster)
    assert counts(harness.db).patches == before.patches + 1
    expected = fresh(harness.db, cluster)
    assert now.lists == expected.lists
    assert now.lists.names[0] == "joined" and len(now) == 5
    assert nodes[0].id not in now.lists.ids and nodes[3].id not in now.lists.ids


def test_own_uncommitted_writes_are_read_from_the_database(harness: Harness) -> None:
    cluster = harness.cluster(3)
    node = harness.nodes(cluster)[0]
    members(harness.db, cluster)
    with harness.db.write() as session:
        node_store.set_status_many(session, [node.id], NodeStatus.ERROR, "x")
        inside = member_table(session, cluster)
        assert inside.lists.status[0] == NodeStatus.ERROR
        session.rollback()
    # Rolled back: the held table (ACTIVE) is still right, and still used.
    before = counts(harness.db)
    assert members(harness.db, cluster).lists.status[0] != NodeStatus.ERROR
    assert counts(harness.db).hits == before.hits + 1


def test_far_behind_or_wholesale_changes_read_everything(
    harness: Harness, other: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = harness.cluster(4)
    node = harness.nodes(cluster)[1]
    members(harness.db, cluster)
    # More revisions than the log keeps: the entries the cache needs are gone.
    for _ in range(2 * member_revisions.KEPT_REVISIONS + 1):
        _set_status(other, node)
    before = counts(harness.db)
    assert members(harness.db, cluster).lists == fresh(harness.db, cluster).lists
    assert counts(harness.db).reads == before.reads + 1
    # A revision that wrote more nodes than the log names is logged as "every member".
    monkeypatch.setattr(member_revisions, "LOG_LIMIT", 1)
    with other.write() as session:
        ids = [n.id for n in harness.nodes(cluster)[:2]]
        node_store.set_status_many(session, ids, NodeStatus.ERROR, "x")
    before = counts(harness.db)
    assert members(harness.db, cluster).lists == fresh(harness.db, cluster).lists
    assert counts(harness.db).reads == before.reads + 1


def test_orphaning_every_member_is_seen(harness: Harness, other: Database) -> None:
    cluster = harness.cluster(3)
    assert len(members(harness.db, cluster)) == 3
    with other.write() as session:
        assert cluster_store.detach_everything(session, cluster, "purged") == 3
    assert len(members(harness.db, cluster)) == 0


def test_the_cache_keeps_at_most_its_budget(harness: Harness, db_url: str) -> None:
    small = Database(db_url, member_cache_members=5)
    try:
        first, second = harness.cluster(3), harness.cluster(3)
        members(small, first)
        members(small, second)  # 6 members: the first cluster's table is dropped
        before = counts(small)
        members(small, second)
        members(small, first)
        after = counts(small)
        assert (after.hits, after.reads) == (before.hits + 1, before.reads + 1)
    finally:
        small.dispose()


def test_a_cache_of_zero_members_reads_every_time(harness: Harness, db_url: str) -> None:
    off = Database(db_url, member_cache_members=0)
    try:
        cluster = harness.cluster(2)
        tables: list[Any] = [members(off, cluster) for _ in range(2)]
        assert tables[0] is not tables[1] and tables[0].lists == tables[1].lists
        assert counts(off) == CacheCounts()
    finally:
        off.dispose()


def test_the_revision_moves_at_the_real_commit_not_at_a_savepoint(
    harness: Harness, other: Database
) -> None:
    cluster = harness.cluster(2)
    node = harness.nodes(cluster)[0]
    members(harness.db, cluster)
    with other.read() as session:
        before = member_revisions.revision_of(session, cluster)
    with other.write() as session:
        with session.begin_nested():
            node_store.set_status_many(session, [node.id], NodeStatus.ERROR, "x")
        # Savepoint released, transaction still open: not bumped yet, not even as seen from
        # inside (a bump here would hold the row lock until the end on PostgreSQL).
        assert member_revisions.revision_of(session, cluster) == before
    with other.read() as session:
        assert member_revisions.revision_of(session, cluster)[0] == before[0] + 1
    assert members(harness.db, cluster).lists.status[0] == NodeStatus.ERROR


def test_a_removed_cluster_leaves_no_revision(harness: Harness) -> None:
    cluster = harness.cluster(2)
    with harness.db.write() as session:
        node_store.delete_many(session, [n.id for n in harness.nodes(cluster)])
        cluster_store.remove(session, cluster)
    with harness.db.read() as session:
        assert member_revisions.revision_of(session, cluster) == (0, 0)
        assert member_revisions.changed_since(session, cluster, 0) == set()
