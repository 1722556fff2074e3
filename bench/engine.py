"""herd's engine and API throughput, measured through the real API.

1. Nodes created and deleted per second with the ``sim`` driver at 1,000 and 10,000 nodes
   (one scale-out from 0, then one scale-in back to 0), each through ``herd serve``.
2. ``GET /v1/nodes/<id>`` requests per second with 32 concurrent clients, beside a bare
   FastAPI endpoint under the same uvicorn in the same run; the ratio is the figure.

Run: ``.venv/bin/python bench/engine.py [--sizes 1000,10000] [--seconds 5]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from common import (
    API_HEADERS,
    bare_fastapi_server,
    herd_server,
    load,
    sim_cluster,
    table,
)


def wait_scaled(client: httpx.Client, cluster_id: str, location: str) -> dict[str, Any]:
    """Wait for a scaling action mostly by polling its cluster's latest event; return the action.

    The action's view lists every child (10,000 ``depended_by`` ids) and the
    cluster's every member; polling either five times a second took a tenth to a
    quarter of the server's CPU away from the engine being measured. The handlers
    record the cluster RESIZING before they store any child and record its settled
    status just before the action ends, so the action is read only while it has no
    children and at the end.
    """
    events = {"oid": cluster_id, "otype": "CLUSTER", "sort": "timestamp:desc", "limit": 1}

    def resizing() -> bool:
        latest = client.get("/v1/events", params=events).json()["events"]
        return bool(latest) and latest[0]["status"] == "RESIZING"

    def action() -> dict[str, Any]:
        return dict(client.get(location).json()["action"])

    final = ("SUCCEEDED", "FAILED", "CANCELLED")
    while not resizing():
        if (body := action())["status"] in final:
            return body
        time.sleep(0.05)
    while resizing():
        time.sleep(0.05)
    while (body := action())["status"] not in final:
        time.sleep(0.05)
    return body


def scale_round_trip(size: int) -> tuple[float, float]:
    """Seconds to scale a sim cluster from 0 to ``size`` nodes, and back to 0."""
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
        server = herd_server(Path(tmp) / "data", HERD_ENGINE_WORKERS="8")
        try:
            client = httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=60)
            cluster_id = sim_cluster(client, 0)
            started = time.perf_counter()
            out = client.post(
                f"/v1/clusters/{cluster_id}/actions", json={"scale_out": {"count": size}}
            )
            action = wait_scaled(client, cluster_id, out.headers["Location"])
            grow = time.perf_counter() - started
            assert action["status"] == "SUCCEEDED", action
            started = time.perf_counter()
            out = client.post(
                f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": size}}
            )
            action = wait_scaled(client, cluster_id, out.headers["Location"])
            shrink = time.perf_counter() - started
            assert action["status"] == "SUCCEEDED", action
            return grow, shrink
        finally:
            server.stop()


def get_node_throughput(seconds: float) -> list[list[object]]:
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
        server = herd_server(Path(tmp) / "data")
        bare = bare_fastapi_server()
        try:
            client = httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=60)
            sim_cluster(client, 50)
            node_id = client.get("/v1/nodes", params={"limit": 1}).json()["nodes"][0]["id"]
            herd_result, generator = load(f"{server.url}/v1/nodes/{node_id}", seconds=seconds)
            bare_result, _ = load(f"{bare.url}/bare/{node_id}", seconds=seconds)
        finally:
            server.stop()
            bare.stop()
    ratio = herd_result.rps / bare_result.rps if bare_result.rps else 0.0
    return [
        [
            "herd GET /v1/nodes/<id>",
            generator,
            herd_result.rps,
            herd_result.p50_ms,
            herd_result.p99_ms,
            herd_result.errors,
            f"{ratio:.2f}",
        ],
        [
            "bare FastAPI GET",
            generator,
            bare_result.rps,
            bare_result.p50_ms,
            bare_result.p99_ms,
            bare_result.errors,
            "1.00",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        grow, shrink = scale_round_trip(size)
        rows.append([size, grow, size / grow, shrink, size / shrink])
    table(
        "sim nodes through the API (scale-out from 0, then scale-in to 0)",
        ["nodes", "scale-out s", "created/s", "scale-in s", "deleted/s"],
        rows,
    )
    table(
        "GET one node, 32 concurrent clients",
        ["endpoint", "load", "req/s", "p50 ms", "p99 ms", "errors", "ratio to bare"],
        get_node_throughput(args.seconds),
    )


if __name__ == "__main__":
    main()
