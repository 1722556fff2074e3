"""The resurrection race: agents reconcile and readers fetch on demand while clusters are deleted.

The stress run: a real ``herd serve`` (with its engine) deletes 200 clusters, each with
a member in each of 3 regions, while one agent per region reconciles as fast as it can
and 50 reader threads call ``ensure`` (Tricircle's "local miss asks central") on random
clusters and regions. The simulated regions take 50 ms to delete a copy, so every
deletion leaves copies gone in some regions while the central row still exists. With
tombstones no copy is ever re-created after central deleted it, and nothing is left.

The control shows the race deterministically instead of hoping for it: the engine is
held between "regional copies deleted" and "central row deleted" while a reader asks
central. With tombstones the reader gets 404 and creates nothing; with tombstones off
(an ``create_app`` argument no setting reaches) it re-creates the copy every time.

Both run with the central store on SQLite and on PostgreSQL (``db_url``): the tombstone's
unique INSERT and the agents' 404s must hold under either store's concurrency.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.deletion.support import (
    LiveServer,
    issue_tokens,
    open_regions,
    region_configs,
    resurrections,
    wait_for,
)

from herd.agent.reconciler import CentralUnavailable, Reconciler, agent_client
from herd.config import Settings
from herd.regions import RegionBackend, Regions
from herd.store.database import Database
from herd.store.models import ClusterRow, NodeRow, ProfileRow

REGIONS = ("R1", "R2", "R3")
CLUSTERS = 200
READERS = 50
DELETERS = 10
AGENT_BREATH = 0.1
REGION_DELETE_LATENCY = 0.05


def _seed(
    url: str, project: str, *, clusters: int = CLUSTERS, regions: tuple[str, ...] = REGIONS
) -> list[str]:
    """Clusters as CLUSTER_CREATE leaves them: ACTIVE, one sim member per region."""
    database = Database(url)
    now = time.time()
    ids = [str(uuid.uuid4()) for _ in range(clusters)]
    with database.write() as session:
        profile = ProfileRow(
            id=str(uuid.uuid4()),
            name="sim",
            type="herd.sim-1.0",
            spec={"type": "herd.sim", "version": "1.0", "properties": {}},
            meta_data={},
            project=project,
            created_at=now,
        )
        session.add(profile)
        session.flush()
        for number, cid in enumerate(ids):
            session.add(
                ClusterRow(
                    id=cid,
                    name=f"c{number}",
                    profile_id=profile.id,
                    init_at=now,
                    created_at=now,
                    desired_capacity=len(regions),
                    next_index=len(regions) + 1,
                    status="ACTIVE",
                    project=project,
                    data={"regions": list(regions)},
                    meta_data={},
                    config={},
                    dependents={},
                )
            )
            for index, region in enumerate(regions, start=1):
                session.add(
                    NodeRow(
                        id=str(uuid.uuid4()),
                        name=f"c{number}-{index}",
                        physical_id=f"seeded-{cid[:8]}-{index}",
                        cluster_id=cid,
                        profile_id=profile.id,
                        index=index,
                        init_at=now,
                        created_at=now,
                        status="ACTIVE",
                        project=project,
                        data={"placement": {"region_name": region, "zone": None}},
                    )
                )
    database.dispose()
    return ids


def _delete_all(live: LiveServer, user: httpx.Client, ids: list[str]) -> float:
    """DELETE every cluster (from several threads) and wait until central has none left."""
    started = time.monotonic()
    answers: list[int] = []

    def delete(chunk: list[str]) -> None:
        with httpx.Client(base_url=live.url, headers=live.headers["member"], timeout=60) as own:
            answers.extend(own.delete(f"/v1/clusters/{cid}").status_code for cid in chunk)

    deleters = [
        threading.Thread(target=delete, args=(ids[n::DELETERS],), daemon=True)
        for n in range(DELETERS)
    ]
    for thread in deleters:
        thread.start()
    for thread in deleters:
        thread.join(120)
    assert answers == [202] * CLUSTERS
    wait_for(
        lambda: user.get("/v1/clusters", params={"limit": 1}).json()["clusters"] == [],
        timeout=150,
        interval=0.2,
    )
    return time.monotonic() - started


def _run(tmp_path: Path, db_url: str) -> dict[str, float]:
    configs = region_configs(tmp_path, REGIONS, delete_latency=REGION_DELETE_LATENCY)
    on_sqlite = db_url.startswith("sqlite")
    live = LiveServer(tmp_path, None if on_sqlite else db_url, configs, HERD_ENGINE_WORKERS="16")
    ids = _seed(f"sqlite:///{live.data_dir / 'herd.db'}" if on_sqlite else db_url, "p1")
    regions = open_regions(configs, tmp_path / "data")
    token = live.headers["agent"]["X-Auth-Token"]
    stop = threading.Event()
    reader_calls = [0]
    with live, httpx.Client(base_url=live.url, headers=live.headers["member"], timeout=30) as user:
        agents = [
            Reconciler(name, regions.backends[name], agent_client(live.url, token))
            for name in REGIONS
        ]
        for agent in agents:  # the copies exist before the deletions start
            assert len(agent.reconcile_once().created) == CLUSTERS

        def reconcile(agent: Reconciler) -> None:
            # Back to back, with a breath between passes: a pass lists every cluster of
            # the region, and three agents listing without pause starve the server's
            # engine of CPU on two shared cores (the readers keep hammering meanwhile).
            while not stop.is_set():
                agent.reconcile_once()
                stop.wait(AGENT_BREATH)

        def read(seed: int) -> None:
            rng = random.Random(seed)
            while not stop.is_set():
                try:
                    rng.choice(agents).ensure(rng.choice(ids))
                    reader_calls[0] += 1
                except CentralUnavailable:
                    pass
                time.sleep(0.25)

        threads = [threading.Thread(target=reconcile, args=(a,), daemon=True) for a in agents]
        threads += [threading.Thread(target=read, args=(n,), daemon=True) for n in range(READERS)]
        for thread in threads:
            thread.start()
        try:
            duration = _delete_all(live, user, ids)
            time.sleep(0.5)  # readers and agents keep going a little after the last delete
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
        for agent in agents:  # one last pass: whatever central answers 404 for goes
            agent.reconcile_once()
        admin = {"X-Auth-Token": live.headers["admin"]["X-Auth-Token"]}
        tombstones_left = len(user.get("/v1/deletions", headers=admin).json()["deletions"])
        for agent in agents:
            agent.client.close()
    figures = {
        "clusters_deleted": float(CLUSTERS),
        "resurrections": float(sum(len(resurrections(b)) for b in regions.backends.values())),
        "copies_left": float(sum(len(b.copies()) for b in regions.backends.values())),
        "tombstones_left": float(tombstones_left),
        "reader_calls": float(reader_calls[0]),
        "delete_seconds": round(duration, 2),
    }
    store = "sqlite" if on_sqlite else "postgresql"
    regions.close()
    print("RACE", store, json.dumps(figures))
    (tmp_path / "figures.json").write_text(json.dumps(figures))
    return figures


def test_no_resurrection_with_tombstones(tmp_path: Path, db_url: str) -> None:
    figures = _run(tmp_path, db_url)
    assert figures["resurrections"] == 0, figures
    assert figures["copies_left"] == 0, figures
    assert figures["tombstones_left"] == 0, figures
    assert figures["reader_calls"] > CLUSTERS, figures


class HeldRegions(Regions):
    """Regions whose deletion of copies stops, once the copies are gone, until released."""

    def __init__(self, backends: dict[str, RegionBackend]) -> None:
        super().__init__(backends)
        self.copies_gone = threading.Event()
        self.release = threading.Event()

    def delete_copies(self, cluster: ClusterRow) -> str | None:
        error = super().delete_copies(cluster)
        self.copies_gone.set()
        assert self.release.wait(30), "the test never released the deletion"
        return error


@pytest.mark.parametrize(("tombstones", "resurrected"), [(True, 0), (False, 1)])
def test_a_reader_inside_the_window(
    api_client: ApiClientFactory,
    tmp_path: Path,
    db_url: str,
    tombstones: bool,
    resurrected: int,
) -> None:
    """One reader asks central while the engine is held between copies and central row."""
    configs = region_configs(tmp_path, ("R1",))
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        auth="token",
        regions=configs,
    )
    regions = HeldRegions(open_regions(configs, settings.data_dir).backends)
    client = api_client(settings, start_engine=True, regions=regions, tombstones=tombstones)
    database = client.app.state.herd.database  # type: ignore[attr-defined]
    headers = issue_tokens(database, "p1")
    (cid,) = _seed(settings.database_url(), "p1", clusters=1, regions=("R1",))
    agent = Reconciler(
        "R1", regions.backends["R1"], TestClient(client.app, headers=headers["agent"])
    )
    assert agent.reconcile_once().created == [cid]
    try:
        assert client.delete(f"/v1/clusters/{cid}", headers=headers["member"]).status_code == 202
        assert regions.copies_gone.wait(30)
        assert regions.backends["R1"].get(cid) is None
        # The reader misses locally and asks central while the central row still exists.
        agent.ensure(cid)
    finally:
        regions.release.set()
    wait_for(
        lambda: client.get(f"/v1/clusters/{cid}", headers=headers["member"]).status_code == 404
    )
    agent.reconcile_once()  # central answers 404 now: a resurrected copy goes again
    assert len(resurrections(regions.backends["R1"])) == resurrected
    assert regions.backends["R1"].copies() == []
    regions.close()
