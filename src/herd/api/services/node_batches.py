"""Concurrent ``GET /v1/nodes/<id>`` on PostgreSQL share one statement (issue 28).

On PostgreSQL a node read is a round trip to the server, made on the event loop
(``herd.api.deps.run_database``): while it waits, the loop reads no request, and on a busy
machine each wait also costs the time until the process is scheduled again. The GETs that
reach the loop together (its turn reads every connection that is ready) are gathered here and
read with one statement, ``WHERE id = ANY(:ids)``, then each is answered from its own row.

Only what that statement answers exactly as the one-by-one read would is batched: a full id,
a caller that is not an agent (an agent's read also checks tombstones) and not regional. A
row outside the caller's project, a missing row (a 36-character *name* is looked up by name
next) and a failed batch all go the one-by-one way (``node_reads.get_node``), so every
caller gets the answer, 404 or error, it would get alone. A batch is one statement in
autocommit mode: one snapshot for reads that were all in flight at once.

SQLite stays one-by-one: its reads are in-process calls with no wait to share.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.store import node_reads

log = logging.getLogger("herd.api.node_batches")

#: ids in one statement; more waiting reads make the next batch
MAX_BATCH = 256
BATCHER = "node_read_batcher"
#: a batch's answer for a read it could not make (the caller then reads alone)
_MISSED = None


class NodeReadBatcher:
    """Gathers the loop's concurrent node reads by id into one statement per turn."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._queue: list[tuple[str, asyncio.Future[Sequence[object] | None]]] = []
        self._scheduled = False

    async def read(self, node_id: str) -> Sequence[object] | None:
        """The node's row (``node_reads.node_select`` columns), or None: read it alone."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Sequence[object] | None] = loop.create_future()
        self._queue.append((node_id, future))
        if not self._scheduled:
            # After the tasks already ready in this turn: their reads join this batch.
            self._scheduled = True
            loop.call_soon(self._drain)
        return await future

    def _drain(self) -> None:
        self._scheduled = False
        batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
        if self._queue:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._drain)
        try:
            with self.services.database.read_connection() as connection:
                rows = node_reads.read_nodes_by_id(connection, [i for i, _ in batch])
        except Exception:  # each caller reads alone and meets its own error
            log.warning("a batch of %d node reads failed; reading each alone", len(batch))
            rows = {}
        for node_id, future in batch:
            if not future.done():  # the caller may have gone away
                future.set_result(rows.get(node_id, _MISSED))


def batched_read(services: Services, ctx: RequestContext, node_id: str) -> NodeReadBatcher | None:
    """The batcher to read ``node_id`` with for ``ctx``, or None when it must be read alone."""
    if (
        len(node_id) != node_reads.FULL_ID
        or ctx.is_agent
        or ctx.regions is not None
        or services.database.is_sqlite
        or services.settings.api_database_threads
    ):
        return None
    found = services.extra.get(BATCHER)
    if not isinstance(found, NodeReadBatcher):
        found = services.extra[BATCHER] = NodeReadBatcher(services)
    return found


def visible(ctx: RequestContext, row: Sequence[object]) -> bool:
    """Whether the one-by-one read by id would have found ``row`` for ``ctx``."""
    scope = ctx.scope()
    return scope.all_projects or row[node_reads.PROJECT] == scope.project
