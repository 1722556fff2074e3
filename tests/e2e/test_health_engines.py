"""Three ``herd engine`` processes share the health checks of six clusters on one PostgreSQL.

kill -9 of the engine holding some clusters' leases, and kill -9 of a member of
each of those clusters: the surviving engines take the leases over and recover
every member. The API is a separate ``herd serve`` without an engine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from tests.conftest import PgServer, free_port
from tests.e2e.conftest import _kill_node_processes
from tests.e2e.health_support import (
    HEALTH_ENV,
    V,
    attach,
    create_cluster,
    events,
    health,
    health_policy,
    kill9,
    pid_of,
    replaced,
    sleeper,
)
from tests.e2e.server import HERD, HerdServer
from tests.waiting import wait_for

from herd.store.database import Database
from herd.store.models import EngineRow

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

DEAD_AFTER = 3.0
INTERVAL = 2
ENGINE_ENV = {
    **HEALTH_ENV,
    "HERD_ENGINE_DEAD_AFTER": str(DEAD_AFTER),
    "HERD_ENGINE_HEARTBEAT_INTERVAL": "0.5",
}


class Engines:
    """``herd engine`` processes on one database and one data directory (one host)."""

    def __init__(self, db_url: str, data_dir: Path, count: int) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []
        for number in range(count):
            log = (data_dir.parent / f"engine-{number}.log").open("ab")
            self.processes.append(
                subprocess.Popen(
                    [HERD, "engine", "--db-url", db_url, "--data-dir", str(data_dir)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, **ENGINE_ENV},
                    start_new_session=True,
                )
            )
            log.close()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


@pytest.fixture
def setup(tmp_path: Path, pg_server: PgServer) -> Iterator[tuple[HerdServer, Engines, Database]]:
    name = pg_server.create_database()
    url = pg_server.url_for(name)
    data_dir = tmp_path / "data"
    api = HerdServer(data_dir, free_port(), db_url=url)
    api.env.update({"HERD_RUN_ENGINE": "false", **ENGINE_ENV})
    engines: Engines | None = None
    database = Database(url)
    try:
        api.start()
        engines = Engines(url, data_dir, 3)
        yield api, engines, database
    finally:
        if engines is not None:
            engines.stop()
        api.stop()
        database.dispose()
        _kill_node_processes(data_dir)
        pg_server.drop_database(name)


def _engine_pids(database: Database) -> dict[str, int]:
    with database.read() as session:
        return {row.id: row.pid for row in session.scalars(select(EngineRow))}


def test_clusters_of_a_killed_engine_are_recovered_by_the_others(
    setup: tuple[HerdServer, Engines, Database],
) -> None:
    api, _engines, database = setup
    wait_for(lambda: len(_engine_pids(database)) == 3)
    client = httpx.Client(base_url=api.url, headers=V, timeout=30, trust_env=False)
    modes = [{"type": "LIFECYCLE_EVENTS"}, {"type": "NODE_STATUS_POLLING"}]
    clusters: dict[str, dict[str, str]] = {}
    for number in range(6):
        cluster, (member,) = create_cluster(client, f"c{number}", sleeper(), 1)
        attach(client, cluster, f"hp{number}", health_policy(modes, interval=INTERVAL))
        clusters[cluster] = member

    def spread() -> dict[str, str] | None:
        holders = {c: (health(client, c)["lease"] or {}).get("engine_id") for c in clusters}
        if None in holders.values() or len(set(holders.values())) < 3:
            return None
        return {c: str(h) for c, h in holders.items()}

    holders = wait_for(spread, 60)
    pids = _engine_pids(database)
    doomed = max(set(holders.values()), key=lambda e: list(holders.values()).count(e))
    orphaned = sorted(c for c, h in holders.items() if h == doomed)
    others = sorted(c for c in clusters if c not in orphaned)
    print(f"\nleases: {sorted(list(holders.values()).count(e) for e in set(holders.values()))}")

    killed = time.monotonic()
    kill9(pids[doomed])
    for cluster in orphaned:
        kill9(pid_of(clusters[cluster]))
    took: dict[str, float] = {}
    for cluster in orphaned:
        member = clusters[cluster]
        wait_for(partial(replaced, client, member["id"], member["physical_id"]), 90)
        took[cluster] = time.monotonic() - killed
    bound = DEAD_AFTER + INTERVAL
    print(
        "engine kill -9 to members recovered: "
        + ", ".join(f"{t:.1f}s" for t in took.values())
        + f" (engine_dead_after + interval = {bound:.0f}s)"
    )
    for cluster in orphaned:
        lease = health(client, cluster)["lease"]
        assert lease is not None and lease["engine_id"] != doomed
        assert lease["engine_id"] in _engine_pids(database)
        reasons = [e["status_reason"] for e in events(client, oid=cluster)]
        assert any(f"from engine {doomed[:8]}" in r for r in reasons)
    for cluster in others:  # clusters of live engines kept their holder and their member
        assert health(client, cluster)["lease"]["engine_id"] == holders[cluster]
        member = clusters[cluster]
        assert health(client, cluster)["members"][0]["physical_id"] == member["physical_id"]
    client.close()
