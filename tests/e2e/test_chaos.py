"""Chaos: engines killed with SIGKILL at random while 8 clusters of real processes scale.

Three ``herd engine`` processes and one ``herd serve --no-engine`` share one database of the
suite's PostgreSQL server and one data directory; nodes are real ``herd.process`` nodes (the
test HTTP server). For ``CHAOS_SECONDS`` every cluster gets one random change after another
(resize to an exact size, scale out, scale in), and every few seconds a random engine is
killed with SIGKILL and started again a moment later. Then the killing stops and:

* every action ends, and every change the test asked for succeeded;
* every cluster has exactly its desired number of members, all ACTIVE;
* every node row has exactly one process (the one its physical id names) and every process
  a node row;
* deleting the clusters leaves no process and no node.

The randomness is seeded and the seed printed: ``HERD_CHAOS_SEED=<seed>`` replays the same
choices (the timing of a loaded machine still varies). ``HERD_CHAOS_SECONDS`` changes the
length. Run it alone with ``pytest -m chaos -s`` (docs/testing.md).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import PgServer, free_port
from tests.e2e.chaos import EngineProcess, NodeProcess, node_process_table
from tests.e2e.sdk import process_profile_spec
from tests.e2e.server import HERD, HerdServer
from tests.waiting import FINAL, wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.chaos,
    pytest.mark.timeout(600),
]

CLUSTERS = 8
ENGINES = 3
MAX_MEMBERS = 4
CHAOS_SECONDS = float(os.environ.get("HERD_CHAOS_SECONDS", "60"))
KILL_EVERY = (2.0, 6.0)  # seconds between two kills, drawn uniformly
DOWN_FOR = (0.2, 2.0)  # seconds a killed engine stays down
SETTLE_SECONDS = 240.0  # deadline for the last actions after the killing stops
HEADERS = {"OpenStack-API-Version": "clustering 1.14"}


@dataclass
class ClusterState:
    id: str
    name: str
    action: str | None = None  # the change in flight
    asked: list[tuple[str, str]] = field(default_factory=list)  # (action id, what)


@dataclass
class Figures:
    seed: int
    kills: int = 0
    changes: int = 0
    conflicts: int = 0
    seconds: float = 0.0
    settle_seconds: float = 0.0
    actions: int = 0
    nodes_created: int = 0
    resumed: int = 0  # actions a surviving or restarted engine took over from a killed one
    rounds: int = 0


def _list(client: httpx.Client, kind: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a list, page by page."""
    items: list[dict[str, Any]] = []
    marker = None
    while True:
        query = {"limit": 500, **params, **({"marker": marker} if marker else {})}
        page = client.get(f"/v1/{kind}", params=query).json()[kind]
        items += page
        if len(page) < 500:
            return items
        marker = page[-1]["id"]


def _change(rng: random.Random, desired: int) -> tuple[dict[str, Any], str]:
    """A random change of a cluster of ``desired`` members, within 0..MAX_MEMBERS."""
    choices = ["resize"]
    if desired < MAX_MEMBERS:
        choices.append("scale_out")
    if desired > 0:
        choices.append("scale_in")
    kind = rng.choice(choices)
    if kind == "resize":
        number = rng.randint(0, MAX_MEMBERS)
        body = {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": number, "strict": True}}
        return body, f"resize to {number}"
    if kind == "scale_out":
        count = rng.randint(1, MAX_MEMBERS - desired)
        return {"scale_out": {"count": count}}, f"scale out {count}"
    count = rng.randint(1, desired)
    return {"scale_in": {"count": count}}, f"scale in {count}"


class Chaos:
    def __init__(self, tmp_path: Path, db_url: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.figures = Figures(seed)
        self.data_dir = tmp_path / "data"
        self.api = HerdServer(
            self.data_dir, free_port(), db_url=db_url, command=[HERD, "serve", "--no-engine"]
        )
        self.engines = [
            EngineProcess(str(n), self.data_dir, db_url, tmp_path) for n in range(ENGINES)
        ]
        self.down_until: dict[int, float] = {}
        self.clusters: list[ClusterState] = []
        self.client = httpx.Client(base_url=self.api.url, headers=HEADERS, timeout=60)

    # -- set-up ----------------------------------------------------------------------------

    def start(self) -> None:
        self.api.start()
        for engine in self.engines:
            engine.start()
        spec = process_profile_spec()
        spec["properties"]["stop_timeout"] = 2
        r = self.client.post("/v1/profiles", json={"profile": {"name": "web", "spec": spec}})
        assert r.status_code == 201, r.text
        profile = r.json()["profile"]["id"]
        for number in range(CLUSTERS):
            size = self.rng.randint(0, 2)
            r = self.client.post(
                "/v1/clusters",
                json={
                    "cluster": {
                        "name": f"c{number}",
                        "profile_id": profile,
                        "desired_capacity": size,
                    }
                },
            )
            assert r.status_code == 202, r.text
            state = ClusterState(r.json()["cluster"]["id"], f"c{number}")
            state.action = r.headers["Location"].rsplit("/", 1)[1]
            state.asked.append((state.action, f"create with {size}"))
            self.clusters.append(state)

    # -- the chaos -------------------------------------------------------------------------

    def run(self) -> None:
        started = time.monotonic()
        end = started + CHAOS_SECONDS
        next_kill = started + self.rng.uniform(*KILL_EVERY)
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_kill:
                self._kill_one()
                next_kill = now + self.rng.uniform(*KILL_EVERY)
            self._restart_due()
            for cluster in self.clusters:
                self._advance(cluster)
            time.sleep(0.1)
        self.figures.seconds = round(time.monotonic() - started, 1)
        for index in list(self.down_until):
            self.down_until[index] = 0.0
        self._restart_due()

    def _kill_one(self) -> None:
        running = [i for i, e in enumerate(self.engines) if e.running]
        if len(running) < 2:  # keep one engine up, or nothing moves
            return
        index = self.rng.choice(running)
        self.engines[index].kill9()
        self.figures.kills += 1
        self.down_until[index] = time.monotonic() + self.rng.uniform(*DOWN_FOR)
        print(f"CHAOS kill -9 engine {index} at {self.figures.kills}")

    def _restart_due(self) -> None:
        for index, until in list(self.down_until.items()):
            if time.monotonic() >= until:
                self.engines[index].start()
                del self.down_until[index]

    def _advance(self, cluster: ClusterState) -> None:
        """Ask the next change of a cluster whose last one has ended."""
        if cluster.action is not None:
            action = self.client.get(f"/v1/actions/{cluster.action}").json()["action"]
            if action["status"] not in FINAL:
                return
            cluster.action = None
        view = self.client.get(f"/v1/clusters/{cluster.id}").json()["cluster"]
        body, what = _change(self.rng, int(view["desired_capacity"]))
        r = self.client.post(f"/v1/clusters/{cluster.id}/actions", json=body)
        if r.status_code == 409:  # the cluster is still locked by the last change
            self.figures.conflicts += 1
            return
        assert r.status_code == 202, r.text
        cluster.action = r.json()["action"]
        cluster.asked.append((cluster.action, what))
        self.figures.changes += 1

    # -- the checks ------------------------------------------------------------------------

    def settle(self) -> list[dict[str, Any]]:
        started = time.monotonic()

        def all_ended() -> list[dict[str, Any]] | None:
            actions = _list(self.client, "actions")
            return actions if all(a["status"] in FINAL for a in actions) else None

        try:
            actions: list[dict[str, Any]] = wait_for(all_ended, SETTLE_SECONDS, interval=0.5)
        except AssertionError:
            open_ = [a for a in _list(self.client, "actions") if a["status"] not in FINAL]
            text = json.dumps(open_, indent=1)[:3000]
            raise AssertionError(f"actions still open: {text}") from None
        self.figures.settle_seconds = round(time.monotonic() - started, 1)
        self.figures.actions = len(actions)
        self.figures.nodes_created = sum(1 for a in actions if a["action"] == "NODE_CREATE")
        self.figures.rounds = min(len(c.asked) for c in self.clusters)
        warnings = _list(self.client, "events", level="WARNING")
        self.figures.resumed = sum(1 for e in warnings if e["status"] == "RESUMED")
        return actions

    def check_actions(self, actions: list[dict[str, Any]]) -> None:
        by_id = {a["id"]: a for a in actions}
        failed = [
            f"{c.name} {what}: {by_id[aid]['status']} {by_id[aid]['status_reason']}"
            for c in self.clusters
            for aid, what in c.asked
            if by_id[aid]["status"] != "SUCCEEDED"
        ]
        assert not failed, "changes that did not succeed:\n" + "\n".join(failed)

    def check_members(self) -> None:
        wrong = []
        for cluster in self.clusters:
            view = self.client.get(f"/v1/clusters/{cluster.id}").json()["cluster"]
            nodes = _list(self.client, "nodes", cluster_id=cluster.id)
            statuses = Counter(n["status"] for n in nodes)
            if len(nodes) != view["desired_capacity"] or set(statuses) - {"ACTIVE"}:
                wrong.append(
                    f"{cluster.name}: desired {view['desired_capacity']}, members "
                    f"{dict(statuses)}, last change {cluster.asked[-1][1]}"
                )
        assert not wrong, "\n".join(wrong)

    def check_processes(self) -> None:
        rows = {n["id"]: n for n in _list(self.client, "nodes")}
        table = node_process_table(self.data_dir)
        by_node: dict[str, list[NodeProcess]] = defaultdict(list)
        for process in table:
            by_node[process.node_id].append(process)
        orphans = sorted(set(by_node) - set(rows))
        assert not orphans, f"processes without a node row: {orphans}"
        for node_id, row in rows.items():
            found = [p.physical_id for p in by_node.get(node_id, [])]
            assert found == [row["physical_id"]], (
                f"node {row['name']} ({row['status']}, physical id {row['physical_id']}) "
                f"has processes {found}"
            )

    def delete_all(self) -> None:
        for cluster in self.clusters:
            r = self.client.delete(f"/v1/clusters/{cluster.id}")
            assert r.status_code == 202, r.text
        wait_for(lambda: _list(self.client, "clusters") == [], timeout=120, interval=0.5)
        assert _list(self.client, "nodes") == []
        assert node_process_table(self.data_dir) == []

    def stop(self) -> None:
        self.client.close()
        for engine in self.engines:
            engine.stop()
        self.api.stop()


def test_chaos_kill9_engines_while_clusters_scale(tmp_path: Path, pg_server: PgServer) -> None:
    seed = int(os.environ.get("HERD_CHAOS_SEED") or random.SystemRandom().randrange(2**31))
    print(f"\nCHAOS seed={seed} (replay: HERD_CHAOS_SEED={seed} pytest -m chaos -s)")
    name = pg_server.create_database()
    chaos = Chaos(tmp_path, pg_server.url_for(name), seed)
    try:
        chaos.start()
        chaos.run()
        actions = chaos.settle()
        print(f"CHAOS figures {json.dumps(chaos.figures.__dict__)}")
        assert chaos.figures.kills > 0 and chaos.figures.rounds > 1, chaos.figures
        chaos.check_actions(actions)
        chaos.check_members()
        chaos.check_processes()
        chaos.delete_all()
    except BaseException:
        print(f"CHAOS failed with seed={seed}; logs under {tmp_path}")
        raise
    finally:
        chaos.stop()
        from tests.e2e.conftest import _kill_node_processes

        _kill_node_processes(chaos.data_dir)
        pg_server.drop_database(name)
