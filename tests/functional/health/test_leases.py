"""Health leases on SQLite and PostgreSQL: one holder per cluster, take-over, fair shares."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update
from tests.functional.health.support import add_engine, engine_context, health_cluster

from herd.engine.health.leases import LeaseKeeper
from herd.store import health_leases as leases
from herd.store.database import Database
from herd.store.models import BindingRow, EngineRow, EventRow, HealthLeaseRow


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    db = Database(db_url)
    db.migrate()
    yield db
    db.dispose()


def _claim(db: Database, cluster: str, engine: str, replace: str | None = None) -> bool:
    with db.write() as session:
        return leases.claim(session, cluster, engine, 1.0, replace=replace)


def test_claim_renew_take_over_release(database: Database) -> None:
    cluster = health_cluster(database, "c")
    assert _claim(database, cluster, "A")
    assert not _claim(database, cluster, "B")  # held: no second holder
    assert not _claim(database, cluster, "B", replace="X")  # X does not hold it
    assert _claim(database, cluster, "B", replace="A")  # A found dead: B takes over
    assert not _claim(database, cluster, "C", replace="A")  # too late: B holds it now
    with database.write() as session:
        assert leases.renew(session, "A", 2.0) == []
        assert leases.renew(session, "B", 2.0) == [cluster]
        assert leases.holds(session, cluster, "B") and not leases.holds(session, cluster, "A")
        assert not leases.release(session, cluster, "A")
        assert leases.release(session, cluster, "B")
        assert leases.lease_of(session, cluster) is None


def _race(database: Database, cluster: str, engines: list[str], previous: str | None) -> list[str]:
    """Every engine claims at the same moment; return the winners."""
    won: list[str] = []
    start = threading.Barrier(len(engines))

    def claim(engine: str) -> None:
        start.wait()
        if _claim(database, cluster, engine, replace=previous):
            won.append(engine)

    threads = [threading.Thread(target=claim, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return won


def test_concurrent_claims_have_exactly_one_winner(database: Database) -> None:
    cluster = health_cluster(database, "c")
    engines = [f"engine-{i}" for i in range(8)]
    won = _race(database, cluster, engines, None)
    assert len(won) == 1
    # The first winner is found dead: the others take over at once; again one wins.
    # (The dead holder does not claim: claiming its own lease changes nothing.)
    taken = _race(database, cluster, [e for e in engines if e != won[0]], won[0])
    assert len(taken) == 1 and taken != won
    with database.read() as session:
        assert session.scalars(select(HealthLeaseRow.engine_id)).all() == taken


def _held(keepers: dict[str, LeaseKeeper]) -> dict[str, set[str]]:
    return {engine: set(keeper.refresh().held) for engine, keeper in keepers.items()}


def test_engines_share_clusters_and_take_over_from_a_dead_one(
    database: Database, tmp_path: Path
) -> None:
    clusters = {health_cluster(database, f"c{i}") for i in range(6)}
    ids = [str(uuid.uuid4()) for _ in range(3)]
    for engine_id in ids:
        add_engine(database, engine_id)
    keepers = {e: LeaseKeeper(engine_context(database, e, tmp_path / e)) for e in ids}
    held = _held(keepers)
    held = _held(keepers)  # a second pass settles claims made before all engines counted
    assert all(len(h) == 2 for h in held.values()), held
    assert set().union(*held.values()) == clusters

    # The first engine dies: its heartbeat stops and its process is gone.
    dead = ids[0]
    with database.write() as session:
        session.execute(update(EngineRow).where(EngineRow.id == dead).values(heartbeat_at=0.0))
    survivors = {e: keepers[e] for e in ids[1:]}
    after = _held(survivors)
    assert set().union(*after.values()) == clusters
    assert not (after[ids[1]] & after[ids[2]])  # exactly one holder each
    with database.read() as session:
        holders = {row.cluster_id: row.engine_id for row in leases.all_leases(session)}
        taken = session.scalars(select(EventRow).where(EventRow.status == "TAKEN_OVER")).all()
    assert set(holders) == clusters and dead not in holders.values()
    assert {e.oid for e in taken} == held[dead]
    assert all(f"from engine {dead[:8]}" in e.status_reason for e in taken)


def test_detached_or_disabled_policy_drops_the_lease(database: Database, tmp_path: Path) -> None:
    kept, detached, disabled = (health_cluster(database, n) for n in ("a", "b", "c"))
    engine = str(uuid.uuid4())
    add_engine(database, engine)
    keeper = LeaseKeeper(engine_context(database, engine, tmp_path))
    assert set(keeper.refresh().held) == {kept, detached, disabled}
    with database.write() as session:
        session.execute(delete(BindingRow).where(BindingRow.cluster_id == detached))
        session.execute(
            update(BindingRow).where(BindingRow.cluster_id == disabled).values(enabled=False)
        )
    assert set(keeper.refresh().held) == {kept}
    with database.read() as session:
        assert [row.cluster_id for row in leases.all_leases(session)] == [kept]


def test_an_engine_taken_for_dead_holds_nothing(database: Database, tmp_path: Path) -> None:
    cluster = health_cluster(database, "a")
    engine = str(uuid.uuid4())
    add_engine(database, engine)
    keeper = LeaseKeeper(engine_context(database, engine, tmp_path))
    assert set(keeper.refresh().held) == {cluster}
    with database.write() as session:
        session.execute(delete(EngineRow).where(EngineRow.id == engine))
    assert keeper.refresh().held == {}
    with database.read() as session:
        assert leases.lease_of(session, cluster) is None
