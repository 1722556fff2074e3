"""API fast paths (issue 10): herd beside a bare FastAPI endpoint, SQLite and PostgreSQL.

For each store a real ``herd serve`` (one API worker, the engine in the same process, the
``herd.sim`` driver) with a cluster of ``--nodes`` members, and a bare FastAPI app under the
same uvicorn, measured in the same run with the same generator (``wrk``):

* ``GET /v1/nodes/<id>``, 32 connections, beside the bare GET;
* ``GET /v1/nodes?cluster_id=<c>&limit=1000`` on that cluster, 1 connection (its latency)
  and 32 connections;
* ``PATCH /v1/clusters/<c>/nodes/<n>`` ``{"mark_unhealthy": true}``, 32 connections, beside
  the bare PATCH; wrk's Lua script spreads the calls over 32 members.

Then the server's peak RSS (``VmHWM``) once a cluster of ``--rss-nodes`` sim nodes exists and
every node was listed once, on SQLite. PostgreSQL is the throwaway server the tests use
(``tests/postgres.py``: fsync off, synchronous_commit off), or ``HERD_TEST_PG_URL``.

Run: ``.venv/bin/python bench/api.py [--seconds 5] [--nodes 10000] [--rss-nodes 100000]
[--stores sqlite,postgresql]``. Needs ``wrk`` (Debian package ``wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.postgres
from common import (
    API_HEADERS,
    LoadResult,
    Server,
    bare_fastapi_server,
    herd_server,
    load,
    sim_cluster,
    table,
)

MARK = json.dumps({"mark_unhealthy": True, "resource_status_reason": "bench"})
CONNECTIONS = 32
SPREAD = 32


def _wrk_spread(urls: list[str], seconds: float) -> LoadResult:
    """wrk PATCHes, each request to the next of ``urls`` (so marks are spread over members)."""
    from common import _wrk

    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)  # noqa: SIM115
    paths = ", ".join(json.dumps(httpx.URL(u).path) for u in urls)
    script.write(
        f"local paths = {{{paths}}}\nlocal i = 0\n"
        'wrk.method = "PATCH"\n'
        f"wrk.body = {json.dumps(MARK)}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        "request = function()\n  i = i % #paths + 1\n"
        "  return wrk.format(nil, paths[i])\nend\n"
    )
    script.close()
    base = str(httpx.URL(urls[0]).copy_with(path="/"))
    return _wrk(base, CONNECTIONS, seconds, "PATCH", MARK, lua=script.name)


@contextmanager
def postgres_url() -> Iterator[str]:
    from tests.postgres import PgServer, find_binaries, given_server, start_local_server

    given = os.environ.get("HERD_TEST_PG_URL")
    stop: Callable[[], None] = lambda: None  # noqa: E731
    server: PgServer
    if given:
        server = given_server(given)
    else:
        binaries = find_binaries()
        if binaries is None:
            raise RuntimeError("no PostgreSQL binaries (see tests/postgres.py)")
        server, stop = start_local_server(binaries)
    name = server.create_database(migrated=True)
    try:
        yield server.url_for(name)
    finally:
        server.drop_database(name)
        stop()


def settled(run: Callable[..., Any], server: Server, *args: Any, **kwargs: Any) -> Any:
    """``run(*args, **kwargs)`` once ``server`` answers a health check within 50 ms."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        started = time.perf_counter()
        httpx.get(server.url + "/healthz", timeout=60)
        if time.perf_counter() - started < 0.05:
            break
        time.sleep(0.2)
    return run(*args, **kwargs)


def peak_rss_mb(server: Server) -> float:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(store: str, server: Server, bare: Server, args: argparse.Namespace) -> list[list[Any]]:
    seconds = args.seconds
    with httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=600) as client:
        started = time.perf_counter()
        cluster = sim_cluster(client, args.nodes, name=f"bench-{store}")
        print(f"{store}: {args.nodes:,} nodes in {time.perf_counter() - started:.1f} s")
        page = client.get("/v1/nodes", params={"cluster_id": cluster, "limit": SPREAD}).json()
        members = [n["id"] for n in page["nodes"]]
    node_url = f"{server.url}/v1/nodes/{members[0]}"
    list_url = f"{server.url}/v1/nodes?cluster_id={cluster}&limit=1000"
    mark_urls = [f"{server.url}/v1/clusters/{cluster}/nodes/{m}" for m in members]
    # Each run starts on an idle server: requests wrk left behind (up to 32 lists of 1,000
    # nodes) are answered before the next run begins.
    get, _ = settled(load, server, node_url, seconds=seconds)
    bare_get, _ = load(f"{bare.url}/bare/{members[0]}", seconds=seconds)
    mark = settled(_wrk_spread, server, mark_urls, seconds)
    bare_patch, _ = load(f"{bare.url}/bare/x", method="PATCH", body=MARK, seconds=seconds)
    list_one, _ = settled(load, server, list_url, connections=1, seconds=seconds)
    list_many, _ = settled(load, server, list_url, seconds=seconds)

    def row(label: str, result: LoadResult, peer: LoadResult | None) -> list[Any]:
        ratio = f"{result.rps / peer.rps:.2f}" if peer and peer.rps else ""
        return [store, label, result.rps, result.p50_ms, result.p99_ms, result.errors, ratio]

    return [
        row("GET /v1/nodes/<id>, 32 conn", get, bare_get),
        row("bare FastAPI GET, 32 conn", bare_get, None),
        row("GET /v1/nodes?limit=1000, 1 conn", list_one, None),
        row("GET /v1/nodes?limit=1000, 32 conn", list_many, None),
        row(f"PATCH mark_unhealthy ({SPREAD} members), 32 conn", mark, bare_patch),
        row("bare FastAPI PATCH, 32 conn", bare_patch, None),
    ]


def rss_row(args: argparse.Namespace) -> list[Any]:
    with tempfile.TemporaryDirectory(prefix="herd-bench-rss-") as tmp:
        server = herd_server(Path(tmp) / "data")
        try:
            idle = peak_rss_mb(server)
            with httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=3600) as client:
                started = time.perf_counter()
                cluster = sim_cluster(client, args.rss_nodes, name="rss")
                built = time.perf_counter() - started
                marker: str | None = None
                listed = 0
                while True:
                    params: dict[str, Any] = {"cluster_id": cluster, "limit": 1000}
                    if marker:
                        params["marker"] = marker
                    nodes = client.get("/v1/nodes", params=params).json()["nodes"]
                    if not nodes:
                        break
                    listed += len(nodes)
                    marker = nodes[-1]["id"]
            peak = peak_rss_mb(server)
        finally:
            server.stop()
    print(f"rss: {args.rss_nodes:,} nodes in {built:.1f} s, {listed:,} listed")
    return [f"{args.rss_nodes:,} sim nodes (SQLite)", f"{idle:,.0f}", f"{peak:,.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--rss-nodes", type=int, default=100_000)
    parser.add_argument("--stores", default="sqlite,postgresql")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("bench/api.py needs wrk (apt-get install wrk)")
    rows: list[list[Any]] = []
    for store in filter(None, args.stores.split(",")):
        with tempfile.TemporaryDirectory(prefix="herd-bench-api-") as tmp:
            data = Path(tmp) / "data"
            with contextmanager_for(store) as env:
                server = herd_server(data, **env)
                bare = bare_fastapi_server()
                try:
                    rows += measure(store, server, bare, args)
                finally:
                    server.stop()
                    bare.stop()
    if rows:
        table(
            "API fast paths: herd beside a bare FastAPI endpoint (same uvicorn, same run, wrk)",
            ["store", "endpoint", "req/s", "p50 ms", "p99 ms", "errors", "ratio to bare"],
            rows,
        )
    if args.rss_nodes:
        table("Server peak RSS (VmHWM)", ["nodes", "idle MB", "peak MB"], [rss_row(args)])


@contextmanager
def contextmanager_for(store: str) -> Iterator[dict[str, str]]:
    if store == "sqlite":
        yield {}
    elif store == "postgresql":
        with postgres_url() as url:
            yield {"HERD_DB_URL": url}
    else:
        raise SystemExit(f"unknown store {store!r}")


if __name__ == "__main__":
    main()
