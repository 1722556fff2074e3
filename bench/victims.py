"""Victim selection: herd's ranking beside Senlin's own selectors, in the same run.

For 1,000 / 100,000 / 1,000,000 members spread over 3 zones, and for each
criterion, it times choosing ``COUNT`` victims

* globally (Senlin: ``nodes_by_random`` / ``nodes_by_age`` / ``nodes_by_profile_age``),
* per zone, as the deletion policy does with a zone plan (Senlin: filter each
  zone's members, then the selector, as ``_victims_by_zones`` does).

Senlin 16.0.0 is installed into ``bench/.cache/senlin-venv`` (gitignored) on
the first run and timed in a subprocess. herd is timed twice: ranking members
already held as columns (``NodeColumns`` with zone codes: what a column-wise
store query returns) and ranking ``NodeSnapshot`` objects (reading the
attributes into columns is included in that figure). The *engine path* is what
a shrink decision costs inside the engine: the members stored in a SQLite
database (the same generated data), read with the engine's own call
(``load_cluster_snapshot``) and ranked, three ways:

* *cold*: every member read from the database (a process with no member cache);
* *held*: the members unchanged since the engine's last decision (its member
  cache answers after one revision lookup);
* *1%*: another process changed 1% of the members (a status each) since the last
  decision; the engine reads the revision and the change log, which carries the new
  statuses (a row change would read those members again), and patches its table
  (store/member_cache.py).

A decision's victims are positions in the member table until their ids are read
(policies/victims.py); every herd figure includes reading those ids, as Senlin's
selectors return ids (the engine reads them to store its decision).

With ``--old-path`` (sizes up to ``--old-max``) it also times the path the engine
took before issue 10 (ORM rows, then ``NodeSnapshot`` objects): read once,
ranked per case, the two added.

Usage: ``python bench/victims.py [--sizes 1000,100000] [--count 10000] [--no-senlin]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import textwrap
import time
import uuid
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.policies.columns import NodeColumns
from herd.policies.ranking import rank_victims, rank_victims_by_group
from herd.policies.victims import RankResult
from herd.store import nodes as node_store
from herd.store.database import Database
from herd.store.models import ClusterRow, NodeRow, ProfileRow
from herd.store.snapshots import cluster_snapshot, load_cluster_snapshot, read_members
from herd.types import Criteria, NodeStatus

CACHE = Path(__file__).resolve().parent / ".cache"
SENLIN_VENV = CACHE / "senlin-venv"
ZONES = ("AZ1", "AZ2", "AZ3")
CRITERIA = (
    Criteria.RANDOM,
    Criteria.OLDEST_FIRST,
    Criteria.YOUNGEST_FIRST,
    Criteria.OLDEST_PROFILE_FIRST,
)

# Member generation shared (as source) by both sides so that they see the same data.
GENERATOR = textwrap.dedent(
    """
    def generate(n, seed=0):
        import random
        rng = random.Random(seed)
        rows = []
        for i in range(n):
            roll = rng.random()
            status = "ERROR" if roll < 0.02 else "WARNING" if roll < 0.03 else "ACTIVE"
            created = None if rng.random() < 0.005 else 1.6e9 + rng.random() * 1e7
            rows.append((
                "node-%08d" % i, i + 1, status, rng.random() < 0.01, created,
                1.5e9 + rng.randrange(5) * 1e6, ("AZ1", "AZ2", "AZ3")[i % 3],
            ))
        return rows
    """
)

SENLIN_WORKER = GENERATOR + textwrap.dedent(
    """
    import json, sys, time
    from senlin.common import scaleutils as su

    class Profile:
        def __init__(self, created_at):
            self.created_at = created_at

    class Node:
        # The attributes Senlin's selectors and nodes_by_zone read.
        def __init__(self, row):
            (self.id, self.index, self.status, self.tainted, self.created_at,
             self.profile_created_at, zone) = row
            self.rt = {"profile": Profile(self.profile_created_at)}
            self.data = {"placement": {"zone": zone}}

    SELECT = {
        "RANDOM": lambda nodes, c: su.nodes_by_random(nodes, c),
        "OLDEST_FIRST": lambda nodes, c: su.nodes_by_age(nodes, c, True),
        "YOUNGEST_FIRST": lambda nodes, c: su.nodes_by_age(nodes, c, False),
        "OLDEST_PROFILE_FIRST": lambda nodes, c: su.nodes_by_profile_age(nodes, c),
    }

    def by_zone(nodes, quotas, select):
        victims = []
        for zone in sorted(quotas):
            members = [n for n in nodes if n.data["placement"]["zone"] == zone]
            victims.extend(select(members, quotas[zone]))
        return victims

    def best(fn, repeat):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    size, count, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    nodes = [Node(r) for r in generate(size)]
    quotas = {"AZ1": count - 2 * (count // 3), "AZ2": count // 3, "AZ3": count // 3}
    out = {}
    for name, select in SELECT.items():
        out[name + "/global"] = best(lambda: select(nodes, count), repeat)
        out[name + "/zones"] = best(lambda: by_zone(nodes, quotas, select), repeat)
    print(json.dumps(out))
    """
)


def generate(n: int, seed: int = 0) -> list[tuple[Any, ...]]:
    namespace: dict[str, Any] = {}
    exec(GENERATOR, namespace)  # the same source the Senlin worker runs
    rows: list[tuple[Any, ...]] = namespace["generate"](n, seed)
    return rows


def ensure_senlin() -> tuple[Path | None, str]:
    """Create the Senlin venv if needed; return its python or why it is missing."""
    python = SENLIN_VENV / "bin" / "python"
    probe = [str(python), "-c", "import senlin.common.scaleutils"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python, "cached"
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"installing senlin==16.0.0 into {SENLIN_VENV} (first run only) ...", flush=True)
    venv.create(SENLIN_VENV, with_pip=True, clear=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, "senlin==16.0.0"], capture_output=True, text=True)
    if done.returncode != 0:
        return None, "pip install senlin==16.0.0 failed: " + done.stderr.strip()[-600:]
    check = subprocess.run(probe, capture_output=True, text=True)
    if check.returncode != 0:
        return None, "import senlin.common.scaleutils failed: " + check.stderr.strip()[-600:]
    return python, "installed"


def time_senlin(python: Path, size: int, count: int, repeat: int) -> dict[str, float]:
    script = CACHE / "senlin_worker.py"
    script.write_text(SENLIN_WORKER)
    done = subprocess.run(
        [str(python), str(script), str(size), str(count), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best(fn: Callable[[], object], repeat: int, setup: Callable[[], None] | None = None) -> float:
    """The fastest of ``repeat`` runs of ``fn`` (``setup`` runs untimed before each)."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        chosen = fn()
        if isinstance(chosen, RankResult):
            # The victims' ids, as Senlin's selectors return them: a ranking hands out
            # positions and gathers the ids on first read, and that read is timed too.
            chosen.node_ids  # noqa: B018
        times.append(time.perf_counter() - start)
    return min(times)


def time_herd(size: int, count: int, repeat: int) -> dict[str, tuple[float, float]]:
    """Per case: (seconds on prebuilt columns, seconds from snapshots)."""
    nodes = [
        NodeSnapshot(
            id=r[0],
            name=r[0],
            index=r[1],
            status=NodeStatus(r[2]),
            tainted=r[3],
            created_at=r[4],
            profile_created_at=r[5],
            zone=r[6],
        )
        for r in generate(size)
    ]
    cols = NodeColumns.from_nodes(nodes)
    cols.group_codes("zone")  # part of building the columns, as a store query would
    quotas = {"AZ1": count - 2 * (count // 3), "AZ2": count // 3, "AZ3": count // 3}
    out: dict[str, tuple[float, float]] = {}
    for criteria in CRITERIA:
        out[f"{criteria.value}/global"] = (
            best(lambda c=criteria: rank_victims(cols, count, c, 1), repeat),
            best(lambda c=criteria: rank_victims(nodes, count, c, 1), repeat),
        )
        out[f"{criteria.value}/zones"] = (
            best(lambda c=criteria: rank_victims_by_group(cols, quotas, "zone", c, 1), repeat),
            best(lambda c=criteria: rank_victims_by_group(nodes, quotas, "zone", c, 1), repeat),
        )
    return out


def store_members(db: Database, rows: list[tuple[Any, ...]]) -> str:
    """Write the generated members as one cluster's node rows; return the cluster id."""
    profiles = {created: str(uuid.uuid4()) for created in sorted({r[5] for r in rows})}
    cluster_id = str(uuid.uuid4())
    with db.write() as session:
        session.execute(
            insert(ProfileRow),
            [
                {"id": pid, "name": pid[:8], "type": "herd.sim-1.0", "spec": {}, "project": "p"}
                | {"meta_data": {}, "created_at": created}
                for created, pid in profiles.items()
            ],
        )
        session.add(
            ClusterRow(
                id=cluster_id,
                name="bench",
                profile_id=next(iter(profiles.values())),
                init_at=0.0,
                min_size=0,
                max_size=-1,
                desired_capacity=len(rows),
                next_index=len(rows) + 1,
                timeout=3600,
                status="ACTIVE",
                project="p",
                meta_data={},
                data={},
                config={},
                dependents={},
            )
        )
    batch = 50_000
    for start in range(0, len(rows), batch):
        with db.write() as session:
            session.execute(
                insert(NodeRow),
                [
                    {
                        "id": f"{r[0]}-{uuid.uuid4().hex[:8]}",
                        "name": r[0],
                        "physical_id": r[0],
                        "cluster_id": cluster_id,
                        "profile_id": profiles[r[5]],
                        "index": r[1],
                        "init_at": 0.0,
                        "status": r[2],
                        "tainted": r[3],
                        "created_at": r[4],
                        "meta_data": {},
                        "data": {"placement": {"zone": r[6]}},
                        "dependents": {},
                        "project": "p",
                    }
                    for r in rows[start : start + batch]
                ],
            )
    return cluster_id


def _old_snapshot(db: Database, cluster_id: str) -> ClusterSnapshot:
    """The engine's previous read: ORM rows, then one NodeSnapshot per member."""
    with db.read() as session:
        cluster = session.get(ClusterRow, cluster_id)
        assert cluster is not None
        nodes = session.scalars(
            select(NodeRow).where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
        ).all()
        times = {
            pid: at for pid, at in session.execute(select(ProfileRow.id, ProfileRow.created_at))
        }
        return cluster_snapshot(cluster, nodes, times)


#: Share of the members changed between two decisions in the "changed" engine case.
CHANGED_SHARE = 0.01


@dataclass
class EngineTimes:
    """One case inside the engine, in seconds (None: not run)."""

    cold: float  # members read from the database (no member cache), then ranked
    held: float  # members unchanged since the last decision: revision check, then ranked
    changed: float  # 1% of members changed elsewhere since: patched from the change log
    before: float | None  # the path before issue 10 (ORM rows, then snapshots)


def time_engine(size: int, count: int, repeat: int, old_path: bool) -> dict[str, EngineTimes]:
    """Per case: the engine's decision (query + rank) cold, held, after a change, and before."""
    quotas = {"AZ1": count - 2 * (count // 3), "AZ2": count // 3, "AZ3": count // 3}
    out: dict[str, EngineTimes] = {}
    with tempfile.TemporaryDirectory(prefix="herd-victims-") as tmp:
        url = f"sqlite:///{tmp}/herd.db"
        engine_db = Database(url)  # the engine's process, with its member cache
        engine_db.migrate()
        cold_db = Database(url, member_cache_members=0)
        elsewhere = Database(url)  # another process that writes members
        cluster_id = store_members(engine_db, generate(size))
        with engine_db.read() as session:
            ids = list(read_members(session, cluster_id).lists.ids)
        step = max(1, int(size * CHANGED_SHARE))
        flips = iter(range(10**9))

        def change_some() -> None:
            # One slice of 1% goes WARNING, then the same slice back to ACTIVE, then the
            # next: each change is 1% of the members and at most 1% are ever broken (moving
            # to a new slice each turn left broken members piling up over the run)
            turn = next(flips)
            start = ((turn // 2) * step) % size
            status = NodeStatus.WARNING if turn % 2 == 0 else NodeStatus.ACTIVE
            with elsewhere.write() as session:
                node_store.set_status_many(session, ids[start : start + step], status, "bench")

        def decide(db: Database, criteria: Criteria, zones: bool) -> object:
            with db.read() as session:
                snapshot = load_cluster_snapshot(session, cluster_id)
            assert snapshot is not None and len(snapshot.nodes) == size
            if zones:
                return rank_victims_by_group(snapshot.nodes, quotas, "zone", criteria, 1)
            return rank_victims(snapshot.nodes, count, criteria, 1)

        old: ClusterSnapshot | None = None
        read_old = 0.0
        if old_path:
            started = time.perf_counter()
            old = _old_snapshot(engine_db, cluster_id)
            read_old = time.perf_counter() - started
        for criteria in CRITERIA:
            for zones in (False, True):
                case = f"{criteria.value}/{'zones' if zones else 'global'}"
                cold = best(lambda c=criteria, z=zones: decide(cold_db, c, z), repeat)
                decide(engine_db, criteria, zones)  # the cache holds the members now
                held = best(lambda c=criteria, z=zones: decide(engine_db, c, z), repeat)
                changed = best(
                    lambda c=criteria, z=zones: decide(engine_db, c, z), repeat, change_some
                )
                before = None
                if old is not None:
                    before = read_old + best(
                        lambda c=criteria, z=zones, n=old.nodes: (
                            rank_victims_by_group(n, quotas, "zone", c, 1)
                            if z
                            else rank_victims(n, count, c, 1)
                        ),
                        repeat,
                    )
                out[case] = EngineTimes(cold, held, changed, before)
        counts = engine_db.member_cache.counts
        assert counts.patches >= len(out) * repeat, counts  # the changed runs were patches
        for database in (engine_db, cold_db, elsewhere):
            database.dispose()
    return out


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:10.2f}"


def ratio(senlin: float | None, herd: float | None) -> str:
    return "-" if senlin is None or herd is None else f"{senlin / herd:8.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--count", type=int, default=10_000, help="victims to choose")
    parser.add_argument("--no-senlin", action="store_true")
    parser.add_argument("--no-engine", action="store_true", help="skip the engine path")
    parser.add_argument("--old-path", action="store_true", help="also time the previous read")
    parser.add_argument("--old-max", type=int, default=100_000, help="largest size for it")
    parser.add_argument("--large-repeat", type=int, default=3, help="runs above 100,000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    python, why = (None, "skipped (--no-senlin)") if args.no_senlin else ensure_senlin()
    if python is None:
        print(f"Senlin not timed: {why}")
    header = (
        f"{'nodes':>9} {'criterion':<21} {'mode':<6} {'senlin ms':>10} {'herd cols ms':>12} "
        f"{'eng cold ms':>11} {'eng held ms':>11} {'eng 1% ms':>10} {'old eng ms':>10} "
        f"{'x (cols)':>9} {'x (cold)':>9} {'x (held)':>9} {'x (1%)':>9}"
    )
    print(f"{args.count} victims per selection, 3 zones, best of N runs\n{header}")
    print("-" * len(header))
    for size in sizes:
        repeat = 7 if size <= 100_000 else args.large_repeat
        senlin: dict[str, float] = {}
        if python is not None:
            try:
                senlin = time_senlin(python, size, args.count, repeat)
            except subprocess.CalledProcessError as exc:
                print(f"Senlin run failed at {size}: {exc.stderr.strip()[-400:]}")
        engine: dict[str, EngineTimes] = {}
        if not args.no_engine:
            old = args.old_path and size <= args.old_max
            engine = time_engine(size, args.count, repeat, old)
        for case, (cols_s, _snap_s) in time_herd(size, args.count, repeat).items():
            criterion, mode = case.split("/")
            theirs = senlin.get(case)
            e = engine.get(case)
            cold, held, changed, before = (
                (e.cold, e.held, e.changed, e.before) if e else (None, None, None, None)
            )
            print(
                f"{size:>9,} {criterion:<21} {mode:<6} {ms(theirs)} {ms(cols_s):>12} "
                f"{ms(cold):>11} {ms(held):>11} {ms(changed)} {ms(before)} "
                f"{ratio(theirs, cols_s):>9} {ratio(theirs, cold):>9} {ratio(theirs, held):>9} "
                f"{ratio(theirs, changed):>9}",
                flush=True,
            )


if __name__ == "__main__":
    main()
