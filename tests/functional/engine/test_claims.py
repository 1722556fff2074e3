"""Claims shared by several engines, and the wake-up of engines in other processes.

On both stores: engines claiming at the same time (threads standing in for processes, each
with its own connections) claim every READY top-level action exactly once, oldest first. On
PostgreSQL: storing a READY action wakes a listening engine (``store/wakeups.py``), and a
dead engine's re-queued actions are announced too; on SQLite the listener starts nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from tests.waiting import wait_for

from herd.store import actions as action_store
from herd.store.database import Database
from herd.store.wakeups import ReadyListener
from herd.types import ActionName, ActionStatus

ACTIONS = 60
ENGINES = 4


def _store_actions(database: Database, count: int, first_at: float = 1.0) -> list[str]:
    ids = []
    with database.write() as session:
        for index in range(count):
            row = action_store.new_action(
                action=ActionName.CLUSTER_SCALE_OUT,
                target=f"c{index}",
                cluster_id=f"c{index}",
                project="p",
                now=first_at + index,
            )
            action_store.add(session, row)
            ids.append(row.id)
    return ids


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    database.migrate()
    yield database
    database.dispose()


def test_engines_claiming_together_claim_each_action_once(database: Database) -> None:
    ids = _store_actions(database, ACTIONS)
    start = threading.Barrier(ENGINES)

    def engine(name: str) -> list[str]:
        start.wait()
        claimed: list[str] = []
        while True:
            with database.write() as session:
                batch = action_store.claim_ready(session, name, 3, 100.0)
            if not batch:
                return claimed
            claimed += batch

    with ThreadPoolExecutor(ENGINES) as pool:
        per_engine = list(pool.map(engine, [f"engine-{n}" for n in range(ENGINES)]))
    everything = [action for claimed in per_engine for action in claimed]
    assert sorted(everything) == sorted(ids)  # each once, none left behind
    for name, claimed in zip([f"engine-{n}" for n in range(ENGINES)], per_engine, strict=True):
        # each engine got its actions oldest first
        assert claimed == sorted(claimed, key=ids.index)
        with database.read() as session:
            rows = action_store.get_many(session, claimed)
        assert {(r.owner, r.status) for r in rows} <= {(name, ActionStatus.RUNNING)}


def test_a_claim_takes_the_oldest_ready_top_level_actions(database: Database) -> None:
    ids = _store_actions(database, 5)
    with database.write() as session:
        child = action_store.new_action(
            action=ActionName.NODE_CREATE,
            target="n1",
            cluster_id="c0",
            project="p",
            parent_id=ids[0],
            now=0.5,
        )
        action_store.add(session, child)
    with database.write() as session:
        assert action_store.claim_ready(session, "engine-1", 2, 9.0) == ids[:2]
    with database.write() as session:
        assert action_store.claim_ready(session, "engine-2", 10, 9.0) == ids[2:]
        assert action_store.claim_ready(session, "engine-3", 0, 9.0) == []


def test_a_stored_action_wakes_a_listening_engine(database: Database) -> None:
    woken = threading.Event()
    listener = ReadyListener(database, woken.set)
    listener.start()
    try:
        if database.is_sqlite:
            assert listener._thread is None  # no channel: the dispatcher's poll finds it
            return
        wait_for(woken.is_set, timeout=60)  # woken once when it starts listening
        woken.clear()
        _store_actions(database, 1)
        wait_for(woken.is_set, timeout=60)
    finally:
        listener.stop()
