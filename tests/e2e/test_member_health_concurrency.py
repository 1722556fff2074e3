"""200 concurrent mark-unhealthy PATCH calls on 20 members against a real ``herd serve``.

Each member's final health equals the answer of the last successful call for it
(the answer with the highest ``health_generation``), no update is lost (the
generation grew by exactly the number of calls that wrote), and nothing is a 500.
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.clusters import create_cluster
from tests.conftest import PgServer, free_port
from tests.e2e.server import HerdServer

pytestmark = pytest.mark.e2e

CALLS = 200
MEMBERS = 20
NOOP = "The node is not marked unhealthy; nothing changed."
HEADERS = {"OpenStack-API-Version": "clustering 1.14"}


def _cluster(client: httpx.Client) -> tuple[str, list[str]]:
    cluster = create_cluster(client, MEMBERS)
    nodes = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
    assert len(nodes) == MEMBERS
    return cluster, [n["id"] for n in nodes]


def _hammer(url: str, cluster: str, nodes: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
    rng = random.Random(7)
    calls = [
        (
            rng.choice(nodes),
            {"mark_unhealthy": rng.random() < 0.6, "resource_status_reason": f"call {i}"},
        )
        for i in range(CALLS)
    ]
    barrier = threading.Barrier(CALLS)
    answers: list[tuple[str, int, dict[str, Any]]] = []
    lock = threading.Lock()

    # One client shared by all threads (httpx.Client is thread-safe), one connection each.
    limits = httpx.Limits(max_connections=CALLS, max_keepalive_connections=CALLS)
    client = httpx.Client(base_url=url, timeout=60, limits=limits)

    def one(node: str, body: dict[str, Any]) -> None:
        barrier.wait()
        r = client.patch(f"/v1/clusters/{cluster}/nodes/{node}", json=body)
        with lock:
            answers.append((node, r.status_code, r.json()))

    threads = [threading.Thread(target=one, args=call) for call in calls]
    with client:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert len(answers) == CALLS
    return answers


def _run(server: HerdServer) -> None:
    with httpx.Client(base_url=server.url, headers=HEADERS, timeout=30) as client:
        cluster, nodes = _cluster(client)
        start = {n: client.get(f"/v1/nodes/{n}").json()["node"] for n in nodes}
        answers = _hammer(server.url, cluster, nodes)
        statuses = {status for _, status, _ in answers}
        assert 500 not in statuses and statuses == {200}, [a for a in answers if a[1] != 200][:3]
        by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for node, _, body in answers:
            by_node[node].append(body)
        for node in nodes:
            final = client.get(f"/v1/nodes/{node}").json()["node"]
            mine = by_node.get(node, [])
            writes = [a for a in mine if a["message"] != NOOP]
            # No lost update: every call that wrote bumped the generation once.
            assert final["health_generation"] == start[node]["health_generation"] + len(writes)
            if not mine:
                assert final["health"] == start[node]["health"]
                continue
            top = max(a["node"]["health_generation"] for a in mine)
            last = [a["node"] for a in mine if a["node"]["health_generation"] == top]
            assert top == final["health_generation"]
            for view in last:
                assert (view["health"], view["health_reason"]) == (
                    final["health"],
                    final["health_reason"],
                ), node
            # Generations of writes are all distinct: each write saw the one before it.
            generations = [a["node"]["health_generation"] for a in writes]
            assert len(set(generations)) == len(generations)


def test_concurrent_marks_on_sqlite(tmp_path: Path) -> None:
    server = HerdServer(tmp_path / "data", free_port())
    try:
        _run(server.start())
    finally:
        server.stop()


@pytest.mark.postgres
def test_concurrent_marks_on_postgresql(tmp_path: Path, pg_server: PgServer) -> None:
    name = pg_server.create_database()
    server = HerdServer(tmp_path / "data", free_port(), db_url=pg_server.url_for(name))
    try:
        _run(server.start())
    finally:
        server.stop()
        pg_server.drop_database(name)
