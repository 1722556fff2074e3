"""Scale out on PostgreSQL (issue 28): does a second, a fourth ``herd engine`` add throughput?

For each configuration, on a fresh database of the suite's throwaway PostgreSQL server
(``tests/postgres.py``, or ``HERD_TEST_PG_URL``): ``herd serve --no-engine --workers W`` (the
API only) and E ``herd engine`` processes (each with ``--metrics-port``), all on that database.
``--clusters`` clusters of ``herd.sim`` nodes whose creates and deletes take ``--latency``
seconds each (the sim driver's ``create_latency``/``delete_latency``: latency-bound work, as
against a real cloud) get one action after another: each cluster alternates ``scale_out`` and
``scale_in`` by ``--count`` nodes, a new action as soon as its last one ended (a closed loop:
as many actions in flight as clusters). The API takes every action (``POST
/v1/clusters/<id>/actions``); the bench reads the actions' ends from the database (one query
every 50 ms, no API load of its own). After ``--warmup`` seconds, ``--seconds`` are measured:

* top-level actions and nodes created per second, and their ratio to the first configuration;
* the median time from the API's 202 to the action's end, the median time the API took to
  answer the POST, and the median time an action held an engine worker (claimed to end:
  ``engines x workers / run time`` is the throughput the workers allow);
* from the engines' ``/metrics`` (``herd_engine_coordination_seconds``): the time spent per
  finished action in claims (the dispatcher's claim transactions, found or not), locks and
  the finishing transaction, and per second in heartbeats, take-over scans and health leases;
* CPU milliseconds per action of the engines, the API and PostgreSQL (``/proc``), and the
  load average: the machine is shared, so compare the rows of one run.

Run: ``.venv/bin/python bench/scale.py [--engines 1,2,4] [--api-workers 1,2] [--clusters 80]
[--latency 1.0] [--count 2] [--seconds 12] [--warmup 4] [--engine-workers 16]``. The largest
engine count is also run with each further API worker count. Default run: about 3 minutes.
At ``--latency 0.2`` one engine with 16 workers is already CPU-bound on a shared 2-core
machine (docs/benchmarks.md): that run measures the CPU each action costs, not scaling.
Latency-bound work (issue 28's goal) is ``--engine-workers 4 --clusters 40``: one engine's
capacity is then 4 workers / ~1.2 s, whose CPU is a small share of one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.postgres
from common import API_HEADERS, HERD, Server, console, free_port, table, wait_http
from scale_probes import Engine, WaitSampler, cpu_seconds, postmaster_pid

FINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
STEPS = ("claim", "lock", "finish", "heartbeat", "takeover", "lease")


# -- the load --------------------------------------------------------------------------------


@dataclass
class Finished:
    at: float
    seconds: float
    status: str
    created: int
    run_s: float  # claimed to ended: the time the action held an engine worker
    post_s: float  # the POST that asked for it: the API's answer time


@dataclass
class Load:
    """A closed loop over every cluster: the next action as soon as the last one ended."""

    client: httpx.Client
    db_url: str
    clusters: list[str]
    count: int
    stop: threading.Event = field(default_factory=threading.Event)
    finished: list[Finished] = field(default_factory=list)
    conflicts: int = 0
    errors: int = 0
    _waiting: dict[str, threading.Event] = field(default_factory=dict)
    _status: dict[str, tuple[str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._poll, daemon=True)]
        threads += [
            threading.Thread(target=self._cluster, args=(c, i), daemon=True)
            for i, c in enumerate(self.clusters)
        ]
        for thread in threads:
            thread.start()
        return threads

    def _cluster(self, cluster_id: str, position: int) -> None:
        grow = True
        while not self.stop.is_set():
            verb = "scale_out" if grow else "scale_in"
            sent = time.monotonic()
            response = self.client.post(
                f"/v1/clusters/{cluster_id}/actions", json={verb: {"count": self.count}}
            )
            if response.status_code == 409:
                with self._lock:
                    self.conflicts += 1
                time.sleep(0.05)
                continue
            if response.status_code != 202:
                with self._lock:
                    self.errors += 1
                time.sleep(0.2)
                continue
            posted = time.monotonic() - sent
            action_id = response.headers["Location"].rsplit("/", 1)[-1]
            done = threading.Event()
            with self._lock:
                self._waiting[action_id] = done
            while not done.wait(0.5):
                if self.stop.is_set():
                    return
            status, run_s = self._status.pop(action_id)
            now = time.monotonic()
            created = self.count if grow and status == "SUCCEEDED" else 0
            with self._lock:
                self.finished.append(Finished(now, now - sent, status, created, run_s, posted))
            if status == "SUCCEEDED":
                grow = not grow

    def _poll(self) -> None:
        from tests.postgres import psycopg_url

        with psycopg.connect(psycopg_url(self.db_url), autocommit=True) as conn:
            while not self.stop.is_set():
                with self._lock:
                    ids = list(self._waiting)
                if ids:
                    rows = conn.execute(
                        "SELECT id, status, end_time - start_time FROM actions "
                        "WHERE id = ANY(%s) AND status = ANY(%s)",
                        (ids, list(FINAL)),
                    ).fetchall()
                    for action_id, status, run_s in rows:
                        self._status[action_id] = (status, float(run_s or 0.0))
                        with self._lock:
                            event = self._waiting.pop(action_id)
                        event.set()
                time.sleep(0.05)


def wait_actions(db_url: str, ids: list[str], timeout: float = 300) -> None:
    from tests.postgres import psycopg_url

    end = time.monotonic() + timeout
    with psycopg.connect(psycopg_url(db_url), autocommit=True) as conn:
        while time.monotonic() < end:
            rows = conn.execute(
                "SELECT status, status_reason FROM actions WHERE id = ANY(%s)", (ids,)
            ).fetchall()
            if len(rows) == len(ids) and all(status in FINAL for status, _ in rows):
                failed = [reason for status, reason in rows if status != "SUCCEEDED"]
                if failed:
                    raise RuntimeError(f"{len(failed)} set-up actions failed: {failed[0]}")
                return
            time.sleep(0.2)
    raise RuntimeError("set-up actions did not end")


def make_clusters(client: httpx.Client, db_url: str, count: int, latency: float) -> list[str]:
    spec = {
        "type": "herd.sim",
        "version": "1.0",
        "properties": {"create_latency": latency, "delete_latency": latency},
    }
    profile = client.post("/v1/profiles", json={"profile": {"name": "scale", "spec": spec}})
    profile.raise_for_status()
    profile_id = profile.json()["profile"]["id"]
    clusters, actions = [], []
    for index in range(count):
        body = {"cluster": {"name": f"scale-{index}", "profile_id": profile_id}}
        created = client.post("/v1/clusters", json=body)
        created.raise_for_status()
        clusters.append(str(created.json()["cluster"]["id"]))
        actions.append(created.headers["Location"].rsplit("/", 1)[-1])
    wait_actions(db_url, actions)
    return clusters


# -- one configuration -----------------------------------------------------------------------


@dataclass
class Figures:
    engines: int
    api_workers: int
    actions_per_s: float
    nodes_per_s: float
    p50_s: float
    run_s: float  # median claimed -> end: an action's time on an engine worker
    post_s: float  # median time the API took to answer the POST
    failed: int
    conflicts: int
    coordination: dict[str, tuple[float, float]]  # step -> (seconds, count) in the window
    cpu: dict[str, float]  # engines, api, postgres, bench: CPU seconds in the window
    actions: int
    load_avg: float
    waits: dict[str, float]  # pg_stat_activity state -> sessions in it on average


def snapshot(engines: list[Engine], api: Server, pg_pid: int | None) -> dict[str, float]:
    out: dict[str, float] = {"at": time.monotonic()}
    for engine in engines:
        for key, value in engine.metrics().items():
            out[key] = out.get(key, 0.0) + value
    out["cpu engines"] = sum(cpu_seconds(e.process.pid) for e in engines)
    out["cpu api"] = cpu_seconds(api.process.pid, with_children=True)
    out["cpu postgres"] = cpu_seconds(pg_pid, with_children=True) if pg_pid else float("nan")
    out["cpu bench"] = cpu_seconds(os.getpid())
    return out


def measure(db_url: str, engines_n: int, workers: int, args: argparse.Namespace) -> Figures:
    env = {
        "HERD_ENGINE_WORKERS": str(args.engine_workers),
        "HERD_MAX_CLUSTERS_PER_PROJECT": str(args.clusters + 10),
        "HERD_LOG_FORMAT": "text",
    }
    with tempfile.TemporaryDirectory(prefix="herd-bench-scale-") as tmp, ExitStack() as stack:
        data = Path(tmp) / "data"
        data.mkdir()
        port = free_port()
        api = Server(
            [
                HERD,
                "serve",
                "--no-engine",
                "--workers",
                str(workers),
                "--port",
                str(port),
                "--data-dir",
                str(data),
                "--db-url",
                db_url,
            ],
            port,
            env=env,
            ready_path="/healthz",
            ready_timeout=180,  # N workers start N interpreters on a loaded machine
        )
        stack.callback(api.stop)
        engines = [Engine(f"e{i}", data, db_url, env) for i in range(engines_n)]
        for engine in engines:
            stack.callback(engine.stop)
        for engine in engines:
            engine.wait_running()
        wait_http(api.url + "/healthz")
        limits = httpx.Limits(max_connections=args.clusters + 8)
        client = httpx.Client(base_url=api.url, headers=API_HEADERS, timeout=120, limits=limits)
        stack.callback(client.close)
        clusters = make_clusters(client, db_url, args.clusters, args.latency)
        pg_pid = postmaster_pid(db_url)
        load = Load(client, db_url, clusters, args.count)
        threads = load.run()
        time.sleep(args.warmup)
        before = snapshot(engines, api, pg_pid)
        load_start = os.getloadavg()[0]
        sampler = WaitSampler(db_url)
        sampler.start()
        time.sleep(args.seconds)
        after = snapshot(engines, api, pg_pid)
        waits = sampler.averages()
        load_avg = (load_start + os.getloadavg()[0]) / 2
        load.stop.set()
        for thread in threads:
            thread.join(5)
    window = after["at"] - before["at"]
    start, end = before["at"], after["at"]
    inside = [f for f in load.finished if start <= f.at < end]
    ok = [f for f in inside if f.status == "SUCCEEDED"]
    coordination = {
        step: (
            after.get(f"herd_engine_coordination_seconds_sum{{{step}}}", 0.0)
            - before.get(f"herd_engine_coordination_seconds_sum{{{step}}}", 0.0),
            after.get(f"herd_engine_coordination_seconds_count{{{step}}}", 0.0)
            - before.get(f"herd_engine_coordination_seconds_count{{{step}}}", 0.0),
        )
        for step in STEPS
    }
    cpu = {
        name: after[f"cpu {name}"] - before[f"cpu {name}"]
        for name in ("engines", "api", "postgres", "bench")
    }
    return Figures(
        engines=engines_n,
        api_workers=workers,
        actions_per_s=len(ok) / window,
        nodes_per_s=sum(f.created for f in ok) / window,
        p50_s=statistics.median(f.seconds for f in ok) if ok else float("nan"),
        run_s=statistics.median(f.run_s for f in ok) if ok else float("nan"),
        post_s=statistics.median(f.post_s for f in ok) if ok else float("nan"),
        failed=len(inside) - len(ok),
        conflicts=load.conflicts,
        coordination=coordination,
        cpu=cpu,
        actions=len(ok),
        load_avg=load_avg,
        waits=waits,
    )


# -- the tables ------------------------------------------------------------------------------


def report(figures: list[Figures], args: argparse.Namespace) -> None:
    base = figures[0]
    console.width = max(console.width, 160)  # the tables are wide; piped output says 80
    throughput, coordination = [], []
    for f in figures:
        per_action = max(f.actions, 1)
        ratio = f"{f.actions_per_s / base.actions_per_s:.2f}" if base.actions_per_s else ""
        throughput.append(
            [
                str(f.engines),
                str(f.api_workers),
                f.actions_per_s,
                f.nodes_per_s,
                ratio,
                f"{f.p50_s * 1000:,.0f}",
                f"{f.post_s * 1000:,.0f}",
                f"{f.run_s * 1000:,.0f}",
                f"{f.engines * args.engine_workers / f.run_s:.1f}" if f.run_s else "",
                " / ".join(
                    f"{f.cpu[k] / per_action * 1000:.0f}" for k in ("engines", "api", "postgres")
                ),
                f"{f.failed}/{f.conflicts}",
                f"{f.load_avg:.1f}",
            ]
        )
        claim_s, claims = f.coordination["claim"]
        locks = {k: v for k, v in f.waits.items() if k.startswith(("Lock", "LWLock"))}
        top_lock = max(locks, key=locks.__getitem__) if locks else ""
        coordination.append(
            [
                str(f.engines),
                str(f.api_workers),
                f"{claim_s / per_action * 1000:.1f} ({claims / args.seconds:,.0f}/s)",
                f"{f.coordination['lock'][0] / per_action * 1000:.1f}",
                f"{f.coordination['finish'][0] / per_action * 1000:.1f}",
                f"{sum(f.coordination[s][0] for s in ('heartbeat', 'takeover', 'lease')):.2f}",
                f"{f.waits.get('running', 0.0):.1f}",
                f"{f.waits.get('idle in transaction', 0.0):.1f}",
                f"{sum(locks.values()):.1f} {top_lock}".strip(),
            ]
        )
    table(
        f"Engines on one PostgreSQL: {args.clusters} sim clusters, scale out/in by {args.count}, "
        f"{args.latency * 1000:.0f} ms per create/delete, {args.engine_workers} workers per "
        f"engine, {args.seconds:g} s measured",
        [
            "engines",
            "API workers",
            "actions/s",
            "nodes created/s",
            "x first row",
            "p50 202->end ms",
            "p50 POST ms",
            "p50 run ms",
            "workers/run actions/s",
            "CPU ms/action engines / API / PG",
            "failed/409",
            "load avg",
        ],
        throughput,
    )
    table(
        "Where the engines wait: coordination transactions (engines' /metrics) and "
        "PostgreSQL sessions (pg_stat_activity, average count)",
        [
            "engines",
            "API workers",
            "claim ms/action (claims/s)",
            "lock ms/action",
            "finish ms/action",
            "heartbeat+takeover+lease s",
            "PG running",
            "PG idle in txn",
            "PG lock waits (top)",
        ],
        coordination,
    )


@contextmanager
def database_url() -> Iterator[tuple[Any, Any]]:
    """(the PostgreSQL server, a function stopping it) as the tests start it."""
    from tests.postgres import PgServer, find_binaries, given_server, start_local_server

    given = os.environ.get("HERD_TEST_PG_URL")
    server: PgServer
    if given:
        server, stop = given_server(given), (lambda: None)
    else:
        binaries = find_binaries()
        if binaries is None:
            raise SystemExit("bench/scale.py needs PostgreSQL (see tests/postgres.py)")
        server, stop = start_local_server(binaries)
    try:
        yield server, stop
    finally:
        stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--engines", default="1,2,4")
    parser.add_argument("--api-workers", default="1,2")
    parser.add_argument("--clusters", type=int, default=80)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--warmup", type=float, default=4.0)
    parser.add_argument("--engine-workers", type=int, default=16)
    args = parser.parse_args()
    engine_counts = [int(n) for n in args.engines.split(",") if n]
    worker_counts = [int(n) for n in args.api_workers.split(",") if n]
    runs = [(e, worker_counts[0]) for e in engine_counts]
    runs += [(max(engine_counts), w) for w in worker_counts[1:]]
    figures: list[Figures] = []
    with database_url() as (server, _stop):
        for engines_n, workers in runs:
            name = server.create_database(migrated=True)
            started = time.monotonic()
            try:
                figures.append(measure(server.url_for(name), engines_n, workers, args))
                console.print(
                    f"{engines_n} engine(s), {workers} API worker(s): "
                    f"{figures[-1].actions_per_s:,.1f} actions/s "
                    f"({time.monotonic() - started:.0f} s)"
                )
            except RuntimeError as exc:  # a start-up that timed out: report the others
                console.print(f"{engines_n} engine(s), {workers} API worker(s): failed: {exc}")
            finally:
                server.drop_database(name)
    if figures:
        report(figures, args)


if __name__ == "__main__":
    main()
