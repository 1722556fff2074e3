"""Group commit: calls that queue share a transaction, each keeps its own answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from herd.api.services.group_commit import GroupCommitter, Work
from herd.errors import NotFound
from herd.store.database import Database


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'group.db'}")
    with db.write() as session:
        session.execute(text("CREATE TABLE marks (name TEXT PRIMARY KEY)"))
    yield db
    db.dispose()


def insert(name: str, fail: BaseException | None = None) -> Any:
    def work(session: Session) -> str:
        session.execute(text("INSERT INTO marks (name) VALUES (:name)"), {"name": name})
        if fail is not None:
            raise fail
        return name

    return work


def stored(database: Database) -> list[str]:
    with database.read() as session:
        return sorted(session.execute(text("SELECT name FROM marks")).scalars())


async def submit_all(committer: GroupCommitter[Work], works: list[Work]) -> list[object]:
    return await asyncio.gather(*(committer.submit(w) for w in works), return_exceptions=True)


@pytest.mark.parametrize("threads", [False, True], ids=["on the loop", "in the pool"])
def test_queued_calls_share_one_transaction_and_keep_their_own_refusals(
    database: Database, threads: bool
) -> None:
    committer: GroupCommitter[Work] = GroupCommitter(database, threads=threads)
    works = [insert(f"n{i}", NotFound("node", f"n{i}") if i % 3 == 0 else None) for i in range(10)]
    answers = asyncio.run(submit_all(committer, works))
    for i, answer in enumerate(answers):
        if i % 3 == 0:
            assert isinstance(answer, NotFound) and answer.args
        else:
            assert answer == f"n{i}"
    # A refused call's statements were rolled back with its savepoint, nobody else's.
    assert stored(database) == sorted(f"n{i}" for i in range(10) if i % 3)
    assert committer.batch_sizes == {10: 1}


def test_a_failed_batch_is_written_again_call_by_call(database: Database) -> None:
    committer: GroupCommitter[Work] = GroupCommitter(database)
    works = [insert(f"n{i}", RuntimeError("boom") if i == 2 else None) for i in range(5)]
    answers = asyncio.run(submit_all(committer, works))
    assert isinstance(answers[2], RuntimeError)
    assert [a for i, a in enumerate(answers) if i != 2] == ["n0", "n1", "n3", "n4"]
    assert stored(database) == ["n0", "n1", "n3", "n4"]


def test_batches_never_exceed_the_limit(database: Database) -> None:
    committer: GroupCommitter[Work] = GroupCommitter(database, max_batch=4)
    answers = asyncio.run(submit_all(committer, [insert(f"n{i}") for i in range(10)]))
    assert answers == [f"n{i}" for i in range(10)]
    assert max(committer.batch_sizes) == 4
    assert sum(size * count for size, count in committer.batch_sizes.items()) == 10
