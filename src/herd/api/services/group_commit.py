"""Group commit: many small writes that queue up share one transaction.

A mark-unhealthy is a handful of statements and one commit; under 32 concurrent callers
the commits (and, on SQLite, the single writer's queue) dominate. Calls submitted while a
batch is being written wait for the next batch, which takes up to :data:`MAX_BATCH` of
them into one transaction. Each call runs in its own savepoint, so one caller's 404 or
409 rolls back only its own statements and reaches only that caller. Should the batch
itself fail (a deadlock, a lost connection, a failed commit), every call in it is run
again alone, in a transaction of its own, and answered from that run: a caller never
sees another caller's failure.

A committer made with ``batch`` hands the calls of a batch to that function all at once
instead (``batch(items) -> [Outcome, ...]``, one per item, in order), so that it can read and
write them set-wise: a few statements per batch rather than per call. Such a function owns its
unit of work (a transaction, or on PostgreSQL one statement outside any), answers refusals in
the outcomes and writes nothing for them; should it raise, it must have written nothing (each
item is then run alone, as above).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from starlette.concurrency import run_in_threadpool

from herd.errors import HerdError
from herd.store.database import Database, Session

log = logging.getLogger("herd.api.group_commit")

MAX_BATCH = 64

Work = Callable[[Session], object]
#: what a call hands the committer: a ``Work``, or an item for its ``batch`` function
Item = TypeVar("Item")


@dataclass(slots=True)
class Outcome:
    """One call's answer: its value, or the exception its caller gets."""

    value: object = None
    error: BaseException | None = None


class GroupCommitter(Generic[Item]):
    """Batches ``work(session)`` calls of one process into shared write transactions."""

    def __init__(
        self,
        database: Database,
        max_batch: int = MAX_BATCH,
        *,
        savepoints: bool = True,
        threads: bool = False,
        batch: Callable[[list[Item]], list[Outcome]] | None = None,
    ) -> None:
        """``savepoints=False`` is for work that raises ``HerdError`` only before it writes
        anything: a refusal then leaves nothing to undo, and each call saves two statements.
        ``batch``: the calls are items for that function, not ``work(session)`` callables;
        it opens its own unit of work.
        """
        self.database = database
        self.batch = batch
        self.max_batch = max_batch
        self.savepoints = savepoints
        self.threads = threads
        self._queue: list[tuple[Item, asyncio.Future[object]]] = []
        self._draining = False
        #: how many batches of each size were written (tests and the benchmark read it)
        self.batch_sizes: Counter[int] = Counter()

    async def submit(self, work: Item) -> object:
        """Run ``work`` in a shared transaction; its result, or its own exception.

        ``work`` is a ``work(session)`` callable, or an item for the committer's ``batch``.
        """
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._queue.append((work, future))
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
                works = [work for work, _ in batch]
                try:
                    if self.threads:
                        outcomes = await run_in_threadpool(self._write, works)
                    else:
                        # Short: the batch runs on the loop, which meanwhile leaves the next
                        # requests in their sockets (they make the next batch).
                        outcomes = self._write(works)
                except BaseException as exc:  # handed to every waiting caller
                    outcomes = [Outcome(error=exc) for _ in works]
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if future.done():  # the caller went away
                        continue
                    if outcome.error is not None:
                        future.set_exception(outcome.error)
                    else:
                        future.set_result(outcome.value)
                # Let the answered callers go and the waiting requests queue up.
                await asyncio.sleep(0)
        finally:
            self._draining = False

    def _write(self, works: list[Item]) -> list[Outcome]:
        self.batch_sizes[len(works)] += 1
        if len(works) > 1:
            try:
                return self._together(works)
            except Exception:
                log.warning("a batch of %d writes failed; writing each alone", len(works))
        return [self._alone(work) for work in works]

    def _together(self, works: list[Item]) -> list[Outcome]:
        if self.batch is not None:
            return self.batch(works)
        outcomes: list[Outcome] = []
        with self.database.write() as session:
            for work in works:
                savepoint = session.begin_nested() if self.savepoints else None
                try:
                    value = _run(work, session)
                except HerdError as exc:
                    # The caller's own refusal (404, 409): undo its statements only.
                    if savepoint is not None:
                        savepoint.rollback()
                    outcomes.append(Outcome(error=exc))
                    continue
                if savepoint is not None:
                    savepoint.commit()
                outcomes.append(Outcome(value=value))
        return outcomes

    def _alone(self, work: Item) -> Outcome:
        try:
            if self.batch is not None:
                return self.batch([work])[0]
            with self.database.write() as session:
                return Outcome(value=_run(work, session))
        except Exception as exc:
            return Outcome(error=exc)


def _run(work: object, session: Session) -> object:
    """``work(session)``: without a ``batch`` function every item is a :data:`Work`."""
    if not callable(work):
        raise TypeError(f"a committer without a batch function runs callables, not {work!r}")
    result: object = work(session)
    return result
