"""A load test: 64 clients mix reads, marks and scale actions on one real ``herd serve``.

For 30 s (127.0.0.1 only) each client loops over ``GET /v1/nodes/<id>``, the cluster's
node list, ``PATCH .../nodes/<n>`` marks and, now and then, a scale-out or scale-in. Then:

* no answer was a 5xx and no request failed to get an answer;
* no mark was lost: on every member still there, the health generation is the highest one
  a mark's answer showed, and it grew by exactly the number of marks that wrote;
* every action the clients started ended, SUCCEEDED or FAILED with a stated reason.

Nothing here bounds how fast the server must be: figures are the benchmark's (bench/api.py).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

pytestmark = pytest.mark.e2e

CLIENTS = 64
SECONDS = 30.0
START_SIZE = 10
HEADERS = {"OpenStack-API-Version": "clustering 1.14"}
#: answers of marks that changed nothing
NOT_WRITTEN = (
    "The node is not marked unhealthy; nothing changed.",
    "The node is being deleted; its health was not changed.",
)


@dataclass
class Record:
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    #: node id -> generations shown by marks that wrote
    writes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    actions: list[str] = field(default_factory=list)


async def _client(
    index: int, client: httpx.AsyncClient, cluster: str, members: list[str], record: Record
) -> None:
    rng = random.Random(index)
    end = time.monotonic() + SECONDS
    calls = 0
    while time.monotonic() < end:
        calls += 1
        choice = rng.random()
        try:
            if choice < 0.35 and members:
                r = await client.get(f"/v1/nodes/{rng.choice(members)}")
            elif choice < 0.45:
                r = await client.get("/v1/nodes", params={"cluster_id": cluster})
                if r.status_code == 200:
                    members[:] = [n["id"] for n in r.json()["nodes"]]
            elif choice < 0.97 and members:
                node = rng.choice(members)
                body = {
                    "mark_unhealthy": rng.random() < 0.8,
                    "resource_status_reason": f"client {index} call {calls}",
                }
                r = await client.patch(f"/v1/clusters/{cluster}/nodes/{node}", json=body)
                if r.status_code == 200 and r.json()["message"] not in NOT_WRITTEN:
                    record.writes[node].append(r.json()["node"]["health_generation"])
            else:
                kind = "scale_out" if rng.random() < 0.6 else "scale_in"
                r = await client.post(f"/v1/clusters/{cluster}/actions", json={kind: {"count": 1}})
                if r.status_code == 202:
                    record.actions.append(r.headers["Location"])
        except httpx.HTTPError as exc:
            record.failures.append(f"{type(exc).__name__} {exc.request.method} {exc.request.url}")
            continue
        record.statuses[r.status_code] += 1


async def _load(url: str, cluster: str, members: list[str]) -> Record:
    record = Record()
    # Idle connections are dropped here long before herd's keep-alive (api_keep_alive, 75 s)
    # could close one just as a request is written on it. With uvicorn's 5 s a client slowed
    # by a loaded machine saw that race as a reset (ReadError) now and then.
    limits = httpx.Limits(
        max_connections=CLIENTS, max_keepalive_connections=CLIENTS, keepalive_expiry=1.0
    )
    async with httpx.AsyncClient(
        base_url=url, headers=HEADERS, timeout=120, limits=limits
    ) as client:
        await asyncio.gather(
            *(_client(i, client, cluster, members, record) for i in range(CLIENTS))
        )
    return record


def _cluster(client: httpx.Client) -> tuple[str, dict[str, int]]:
    spec = {"type": "herd.sim", "version": "1.0", "properties": {}}
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}}).json()
    body: dict[str, Any] = {
        "name": "mix",
        "profile_id": profile["profile"]["id"],
        "desired_capacity": START_SIZE,
        "min_size": 1,
        "max_size": 40,
    }
    r = client.post("/v1/clusters", json={"cluster": body})
    assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
    cluster = r.json()["cluster"]["id"]
    nodes = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
    return cluster, {n["id"]: n["health_generation"] for n in nodes}


def test_64_clients_mixing_reads_marks_and_scaling(tmp_path: Path) -> None:
    server = HerdServer(tmp_path / "data", free_port()).start()
    try:
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as client:
            cluster, start = _cluster(client)
            record = asyncio.run(_load(server.url, cluster, list(start)))
            print(f"answers by status: {dict(record.statuses)}, actions: {len(record.actions)}")
            assert record.failures == []
            assert not [s for s in record.statuses if s >= 500], record.statuses
            assert record.statuses[200] > 0 and record.writes and record.actions

            for location in record.actions:
                action = wait_for_action(client, location, timeout=300)
                assert action["status"] in ("SUCCEEDED", "FAILED"), action
                if action["status"] == "FAILED":
                    assert action["status_reason"], action

            for node, generations in record.writes.items():
                r = client.get(f"/v1/nodes/{node}")
                if r.status_code == 404:
                    continue  # scaled in since; its marks went with it
                final = r.json()["node"]["health_generation"]
                assert final == max(generations), node
                # Each write bumped the generation once, and each saw the one before it.
                assert final - start.get(node, 0) == len(generations), node
                assert len(set(generations)) == len(generations), node
    finally:
        server.stop()
