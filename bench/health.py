"""Health benchmarks: marking members unhealthy, and the health manager.

1. Mark-unhealthy throughput: ``PATCH /v1/clusters/<c>/nodes/<n>`` through ``herd serve``.
   Requests per second and p99 latency with 32 concurrent clients against ``herd serve`` on
   SQLite, beside a bare FastAPI ``PATCH /bare/{item}`` endpoint (same uvicorn, same body,
   same load generator) in the same run; the ratio is the figure. Two herd rows: every call
   on one member (all writers on one row lock), and calls spread over 20 members (httpx
   load, one URL per client).
2. Detection to recovered (``bench/health_manager.py``): ``kill -9`` of a ``herd.process``
   member until the API shows it ACTIVE on a new process, with LIFECYCLE_EVENTS and with
   NODE_STATUS_POLLING every second.
3. The CPU cost of polling 1,000 ``herd.sim`` members every 5 s (NODE_STATUS_POLLING):
   CPU seconds of the ``herd serve`` process with the policy, minus an idle baseline.

Run: ``.venv/bin/python bench/health.py [--seconds 5] [--trials 5] [--cpu-seconds 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import health_manager
from common import (
    API_HEADERS,
    LoadResult,
    bare_fastapi_server,
    herd_server,
    load,
    sim_cluster,
    table,
)

BODY = json.dumps({"mark_unhealthy": True, "resource_status_reason": "bench"})
CONNECTIONS = 32
MEMBERS = 20


async def _spread(urls: list[str], seconds: float) -> LoadResult:
    """Like ``common.load`` with httpx, but client ``i`` always patches ``urls[i % len]``."""
    latencies: list[float] = []
    errors = 0
    end = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:

        async def worker(url: str) -> None:
            nonlocal errors
            while time.perf_counter() < end:
                start = time.perf_counter()
                response = await client.patch(
                    url, content=BODY, headers={"Content-Type": "application/json"}
                )
                latencies.append(time.perf_counter() - start)
                errors += response.status_code >= 300

        started = time.perf_counter()
        await asyncio.gather(*(worker(urls[i % len(urls)]) for i in range(CONNECTIONS)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000
    return LoadResult(len(latencies), elapsed, p50, p99, errors)


def measure(seconds: float) -> list[list[object]]:
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
        server = herd_server(Path(tmp) / "data")
        bare = bare_fastapi_server()
        try:
            client = httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=60)
            cluster = sim_cluster(client, MEMBERS)
            nodes = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
            urls = [f"{server.url}/v1/clusters/{cluster}/nodes/{n['id']}" for n in nodes]
            one, generator = load(urls[0], method="PATCH", body=BODY, seconds=seconds)
            spread = asyncio.run(_spread(urls, seconds))
            bare_result, _ = load(f"{bare.url}/bare/x", method="PATCH", body=BODY, seconds=seconds)
        finally:
            server.stop()
            bare.stop()
    rows: list[list[object]] = []
    for label, result, gen in (
        ("herd PATCH mark_unhealthy, 1 member", one, generator),
        (f"herd PATCH mark_unhealthy, {MEMBERS} members", spread, "httpx"),
        ("bare FastAPI PATCH", bare_result, generator),
    ):
        ratio = result.rps / bare_result.rps if bare_result.rps else 0.0
        rows.append(
            [label, gen, result.rps, result.p50_ms, result.p99_ms, result.errors, f"{ratio:.2f}"]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--trials", type=int, default=5, help="kills per detection mode")
    parser.add_argument("--cpu-seconds", type=float, default=30.0, help="CPU sampling window")
    parser.add_argument("--members", type=int, default=1000, help="sim members polled")
    parser.add_argument(
        "--only", choices=("mark", "recovery", "cpu"), default=None, help="run one part only"
    )
    args = parser.parse_args()
    if args.only in (None, "mark"):
        table(
            f"PATCH mark_unhealthy, {CONNECTIONS} concurrent clients, SQLite",
            ["endpoint", "load", "req/s", "p50 ms", "p99 ms", "errors", "ratio to bare"],
            measure(args.seconds),
        )
    if args.only in (None, "recovery"):
        table(
            f"kill -9 of a herd.process member to recovered, {args.trials} kills per mode",
            ["detection", "min s", "median s", "max s", "recoveries"],
            health_manager.detection_to_recovered(args.trials),
        )
    if args.only in (None, "cpu"):
        table(
            f"CPU of herd serve polling {args.members} sim members every 5 s "
            f"({args.cpu_seconds:g} s windows)",
            ["run", "CPU s", "% of one core"],
            health_manager.polling_cpu(args.members, args.cpu_seconds),
        )


if __name__ == "__main__":
    main()
