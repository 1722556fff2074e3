"""A batch of marks (the group commit) answers as the same marks made one at a time would,
and costs the same few statements however many marks it holds (SQLite and PostgreSQL).

The marks go to the app's own group committer directly, all submitted before the first
batch is written, so that they share one batch; the HTTP path is the other tests'.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api
from tests.functional.member_health.conftest import engine_settings

from herd.api.app import create_app
from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import APIVersion
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.member_health import Mark, committer
from herd.errors import HerdError
from herd.store.models import ActionRow, EngineRow, NodeLockRow
from herd.types import ActionCause, ActionName, ActionStatus, Role

VERSION = APIVersion(1, 14)
ADMIN = RequestContext("admin", "default", (Role.ADMIN.value,), VERSION)
STRANGER = RequestContext("someone", "elsewhere", (Role.MEMBER.value,), VERSION)
MEMBERS = 6


@pytest.fixture
def app(api_client: ApiClientFactory, tmp_path: Path, db_url: str) -> Iterator[TestClient]:
    settings = engine_settings(tmp_path, db_url)
    with TestClient(create_app(settings, start_engine=True)) as builder:
        builder_api = Api(builder)
        for name in ("alpha", "beta"):
            builder_api.cluster(MEMBERS, name=name, one_by_one=False)
        builder_api.cluster(1, name="other", one_by_one=False)
    # The engine is off from here on: the only statements are the marks' (and the
    # API heartbeat's, on its own thread).
    yield api_client(settings, start_engine=False)


def services_of(client: TestClient) -> Services:
    services: Services = client.app.state.herd  # type: ignore[attr-defined]
    return services


def run_batch(services: Services, marks: list[Mark]) -> list[Any]:
    async def submit_all() -> list[Any]:
        found = committer(services)
        return await asyncio.gather(*(found.submit(m) for m in marks), return_exceptions=True)

    return asyncio.run(submit_all())


def mark(cluster: str, node: str, unhealthy: bool, reason: str | None = None) -> Mark:
    body: dict[str, Any] = {"mark_unhealthy": unhealthy}
    if reason is not None:
        body["resource_status_reason"] = reason
    return Mark(ADMIN, cluster, node, MarkUnhealthy.model_validate(body))


def hold_node_lock(services: Services, node_id: str) -> None:
    """A live action (of a live engine) holds the node's lock, as a running NODE_OPERATION."""
    now = time.time()
    engine_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
    with services.database.write() as session:
        session.add(EngineRow(id=engine_id, host="test", pid=1, started_at=now,
                              heartbeat_at=now + 3600))  # fmt: skip
        session.add(
            ActionRow(
                id=action_id,
                name="busy",
                target=node_id,
                action=ActionName.NODE_OPERATION,
                cause=ActionCause.RPC,
                owner=engine_id,
                status=ActionStatus.RUNNING,
                project="default",
                user="admin",
            )
        )
        session.flush()
        session.add(NodeLockRow(node_id=node_id, action_id=action_id, updated_at=now))


def scenario(api: Api, cluster_name: str) -> tuple[list[Mark], dict[str, str]]:
    """The same marks for cluster ``alpha`` or ``beta``; and the ids and names to compare by."""
    cluster = api.get_cluster(cluster_name)
    ids = api.member_ids(cluster["id"])
    foreign = api.member_ids(api.get_cluster("other")["id"])[0]
    first, second, third, fourth, locked, sixth = ids
    c = cluster["id"]
    marks = [
        mark(c, first, True, "r1"),
        mark(c, first, True, "r2"),  # sees the mark before it: a change
        mark(c, first, True, "r2"),  # the same again: no change, one more generation
        mark(c, first, False, "fixed"),
        mark(c, second, False),  # not unhealthy: nothing to do
        mark(c, api.node(third)["name"], True),  # type: ignore[index]  # by name
        mark(c, fourth[:8], True, "short"),  # by short id
        mark(c, foreign, True),  # a member of another cluster: 404
        mark(c, locked, True),  # its node lock is held: 409
        mark("no-such-cluster", sixth, True),  # 404
        mark(cluster["name"], sixth, True, "by cluster name"),
        Mark(STRANGER, c, sixth, MarkUnhealthy.model_validate({"mark_unhealthy": True})),
        mark(c, sixth, False),  # sees the mark by cluster name: back to healthy
    ]
    names = {c: "<cluster>", cluster["name"]: "<cluster name>", foreign: "<foreign>"}
    for position, node in enumerate(ids):
        names[node] = f"<member {position}>"
        names[node[:8]] = f"<short {position}>"
        names[api.node(node)["name"]] = f"<name {position}>"  # type: ignore[index]
    return marks, names


def comparable(answer: Any, names: dict[str, str]) -> Any:
    """An answer with this cluster's ids and names replaced, times dropped."""

    pattern = re.compile("|".join(map(re.escape, sorted(names, key=len, reverse=True))))

    def plain(text: str) -> str:
        return pattern.sub(lambda found: names[found[0]], text)

    if isinstance(answer, HerdError):
        return (type(answer).__name__, plain(str(answer)))
    values = answer.values
    return (answer.changed, answer.message, plain(values[0]), *values[18:21], values[22])


def test_a_batch_answers_as_one_mark_at_a_time(app: TestClient) -> None:
    api, services = Api(app), services_of(app)
    answers: dict[str, list[Any]] = {}
    for name in ("alpha", "beta"):
        marks, names = scenario(api, name)
        hold_node_lock(services, marks[8].node)
        committer(services).batch_sizes.clear()
        if name == "alpha":
            got = run_batch(services, marks)
            assert committer(services).batch_sizes == {len(marks): 1}
        else:
            got = [run_batch(services, [m])[0] for m in marks]
            assert committer(services).batch_sizes == {1: len(marks)}
        answers[name] = [comparable(a, names) for a in got]
        events = [
            (e["action"], e["status_reason"], names.get(e["oid"], e["oid"]))
            for e in api.events(cluster_id=marks[0].cluster)
            if e["action"].startswith("NODE_MARK")
        ]
        answers[name].append(sorted(events))
        final = {names[n["id"]]: (n["health"], n["health_reason"], n["health_generation"])
                 for n in api.members(marks[0].cluster)}  # fmt: skip
        answers[name].append(final)
    assert answers["alpha"] == answers["beta"]
    got = answers["alpha"]
    assert [g[0] for g in got[:4]] == [True, True, False, True]
    assert [g[-1] for g in got[:4]] == [1, 2, 3, 4]  # each mark saw the one before it
    assert got[7][0] == "NotFound" and got[9][0] == "NotFound" and got[11][0] == "NotFound"
    assert got[8] == (
        "ActionInProgress",
        "Cluster <cluster name> already has an action (NODE_OPERATION) in progress.",
    )


@contextmanager
def statements(services: Services, autocommit: list[bool] | None = None) -> Iterator[list[str]]:
    """The first word of every statement sent while the block runs (the batch may run on a
    thread of its own), but the API heartbeat's and SQLite's BEGIN; ``autocommit`` gets, for
    each, whether it ran outside a transaction (PostgreSQL: no BEGIN and COMMIT sent)."""
    counted: list[str] = []

    def count(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if "api_services" not in statement and not statement.startswith("BEGIN"):
            counted.append(statement.split(None, 1)[0])
            if autocommit is not None:
                autocommit.append(bool(getattr(cursor.connection, "autocommit", False)))

    engine = services.database.write_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield counted
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_batch_costs_the_same_statements_for_one_mark_or_many(app: TestClient) -> None:
    api, services = Api(app), services_of(app)
    cluster = api.get_cluster("alpha")["id"]
    ids = api.member_ids(cluster)
    counts = []
    autocommit: list[bool] = []
    for size, reason in ((1, "one"), (MEMBERS, "many")):
        with statements(services, autocommit) as counted:
            answers = run_batch(services, [mark(cluster, n, True, reason) for n in ids[:size]])
            assert all(a.changed for a in answers)
            counts.append(list(counted))
    # A read, an UPDATE, an event INSERT and the member revision's bump and log: the
    # same for six marks as for one (they were 4 statements a mark, plus the batch's). On
    # PostgreSQL the writes are one statement (mark_statement.write_all): a read and a WITH,
    # both outside a transaction (two round trips: no BEGIN, no COMMIT).
    assert counts[0] == counts[1], counts
    if services.database.is_sqlite:
        assert len(counts[1]) == 5, counts
    else:
        assert counts[1] == ["SELECT", "WITH"], counts
        assert autocommit == [True] * 4, autocommit
    for node in ids:
        assert api.node(node)["health_reason"] == "many"  # type: ignore[index]


def test_marks_bump_log_and_prune_the_member_revision_as_publish_does(app: TestClient) -> None:
    """On PostgreSQL the batch writes the revision itself (``mark_statement.write_all``):
    the bump, the log of state changes and the pruning every KEPT_REVISIONS revisions come
    out as ``member_revisions.publish``'s do on SQLite."""
    from sqlalchemy import select

    from herd.store.member_revisions import KEPT_REVISIONS, STATE
    from herd.store.models import MemberChangeRow, MemberRevisionRow

    api, services = Api(app), services_of(app)
    cluster = api.get_cluster("beta")["id"]
    node = api.member_ids(cluster)[0]

    def revision() -> tuple[int, int]:
        with services.database.read() as session:
            row = session.execute(
                select(MemberRevisionRow.revision, MemberRevisionRow.horizon).where(
                    MemberRevisionRow.cluster_id == cluster
                )
            ).one()
            return int(row[0]), int(row[1])

    start, _ = revision()
    marks = 2 * KEPT_REVISIONS + 2  # past a second pruning (the first keeps everything)
    for i in range(marks):
        (answer,) = run_batch(services, [mark(cluster, node, i % 2 == 0, f"r{i}")])
        assert answer.changed
    now, horizon = revision()
    assert now == start + marks
    assert horizon == now - now % KEPT_REVISIONS - KEPT_REVISIONS > 0
    with services.database.read() as session:
        logged = session.execute(
            select(
                MemberChangeRow.revision,
                MemberChangeRow.part,
                MemberChangeRow.fields,
                MemberChangeRow.status,
                MemberChangeRow.health,
                MemberChangeRow.count,
                MemberChangeRow.node_ids,
            ).where(MemberChangeRow.cluster_id == cluster)
        ).all()
    assert sorted(r[0] for r in logged) == list(range(horizon + 1, now + 1))  # older: pruned
    last = max(logged)
    # The last mark (healthy again): one part, the member's id alone.
    assert last[1:] == (0, STATE, None, "CHECK_COMPLETE", 1, node)


def test_a_member_written_between_the_read_and_the_write_is_marked_again(app: TestClient) -> None:
    """On PostgreSQL a batch reads without locking and writes only the rows still as it read
    them: a member another API worker marks between the two is marked again, locked, on top
    of that mark (no update lost, one event), and the other members of the batch once."""
    from sqlalchemy import select

    from herd.store.models import EventRow, NodeRow

    api, services = Api(app), services_of(app)
    if services.database.is_sqlite:
        pytest.skip("SQLite: a batch is one locked transaction; nothing comes between")
    cluster = api.get_cluster("beta")["id"]
    node, other = api.member_ids(cluster)[:2]
    before = {n: api.node(n)["health_generation"] for n in (node, other)}  # type: ignore[index]
    sent: list[tuple[str, bool]] = []  # the batch's statements, and whether autocommitted
    elsewhere: list[str] = []

    def between(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if elsewhere or "api_services" in statement:
            return
        sent.append((statement.split(None, 1)[0], bool(cursor.connection.autocommit)))
        if sent[-1][0] == "WITH" and len(sent) == 2:
            elsewhere.append(node)  # another worker's mark of ``node``, committed
            with services.database.write() as session:
                row = session.get(NodeRow, node)
                assert row is not None
                row.health_generation += 1
                row.health_reason = "elsewhere"
            elsewhere.clear()

    engine = services.database.write_engine
    event.listen(engine, "before_cursor_execute", between)
    try:
        first, second = run_batch(
            services, [mark(cluster, node, True, "here"), mark(cluster, other, True, "here")]
        )
    finally:
        event.remove(engine, "before_cursor_execute", between)
    # The batch's read and write, unlocked; then the stale member's marks, in a transaction.
    assert sent == [("SELECT", True), ("WITH", True), ("SELECT", False), ("WITH", False)], sent
    for answer, member, marks in ((first, node, 2), (second, other, 1)):
        assert answer.changed and answer.values[22] == before[member] + marks
        got = api.node(member)
        assert got["health_reason"] == "here"  # type: ignore[index]
        assert got["health_generation"] == before[member] + marks  # type: ignore[index]
    with services.database.read() as session:
        events = session.execute(
            select(EventRow.oid).where(
                EventRow.action == "NODE_MARK_UNHEALTHY", EventRow.status_reason == "here"
            )
        ).scalars()
        assert sorted(events) == sorted([node, other])
