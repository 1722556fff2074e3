"""Where the ``sim`` driver keeps its servers: in memory, or in a SQLite file.

In memory (the default) is what scale benchmarks want: 100,000 servers in a few
tens of megabytes, no I/O. A file is what several ``herd engine`` processes
sharing one data directory need: a server created by one engine must be seen,
checked and deleted by another after the first one dies, as a real cloud's
servers would be. The file is a small SQLite database beside herd's own; every
read-modify-write runs in one ``BEGIN IMMEDIATE`` transaction, so engines on
one machine never lose each other's changes.

Both stores hand out :class:`SimServer` records; a caller that changes one
calls :meth:`SimServers.put` before its transaction ends (for the memory store
that is a cheap re-assignment of the same object).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Protocol


class SimServer:
    """One simulated server."""

    __slots__ = (
        "broken",
        "node_id",
        "rebooted",
        "rebuilt",
        "region_name",
        "signals",
        "state",
        "zone",
    )

    def __init__(self, node_id: str | None, zone: str | None, region_name: str | None) -> None:
        self.node_id = node_id  # None: a server herd did not create (see sim_ops.py)
        self.zone = zone
        self.region_name = region_name
        self.broken: str | None = None
        self.rebooted = 0
        self.rebuilt = 0
        self.state = "running"  # running, stopped or paused (operations)
        self.signals: list[str] = []

    def data(self) -> dict[str, object]:
        return {"placement": {"zone": self.zone, "region_name": self.region_name}}


class SimServers(Protocol):
    """The servers of one simulated cloud, keyed by physical id."""

    def transaction(self) -> AbstractContextManager[None]:
        """Everything done inside is one atomic change (callers hold the driver's lock)."""

    def get(self, physical_id: str) -> SimServer | None: ...

    def put(self, physical_id: str, server: SimServer) -> None: ...

    def pop(self, physical_id: str) -> SimServer | None: ...

    def items(self) -> list[tuple[str, SimServer]]: ...

    def count(self) -> int: ...


class MemoryServers:
    """Servers in a dict: one process's private cloud."""

    def __init__(self) -> None:
        self._servers: dict[str, SimServer] = {}

    def transaction(self) -> AbstractContextManager[None]:
        return nullcontext()

    def get(self, physical_id: str) -> SimServer | None:
        return self._servers.get(physical_id)

    def put(self, physical_id: str, server: SimServer) -> None:
        self._servers[physical_id] = server

    def pop(self, physical_id: str) -> SimServer | None:
        return self._servers.pop(physical_id, None)

    def items(self) -> list[tuple[str, SimServer]]:
        return list(self._servers.items())

    def count(self) -> int:
        return len(self._servers)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS sim_servers (
    physical_id TEXT PRIMARY KEY,
    node_id TEXT,
    zone TEXT,
    region_name TEXT,
    broken TEXT,
    rebooted INTEGER NOT NULL,
    rebuilt INTEGER NOT NULL,
    state TEXT NOT NULL,
    signals TEXT NOT NULL
)
"""
_COLUMNS = "physical_id, node_id, zone, region_name, broken, rebooted, rebuilt, state, signals"


class FileServers:
    """Servers in a SQLite file that every process opening it shares."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection, used under the driver's lock; autocommit outside transaction().
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = 30000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(_SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock first, so two engines' read-modify-writes serialise.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, physical_id: str) -> SimServer | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM sim_servers WHERE physical_id = ?", (physical_id,)
        ).fetchone()
        return _server(row) if row is not None else None

    def put(self, physical_id: str, server: SimServer) -> None:
        self._db.execute(
            f"INSERT OR REPLACE INTO sim_servers ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                physical_id,
                server.node_id,
                server.zone,
                server.region_name,
                server.broken,
                server.rebooted,
                server.rebuilt,
                server.state,
                json.dumps(server.signals),
            ),
        )

    def pop(self, physical_id: str) -> SimServer | None:
        server = self.get(physical_id)
        if server is not None:
            self._db.execute("DELETE FROM sim_servers WHERE physical_id = ?", (physical_id,))
        return server

    def items(self) -> list[tuple[str, SimServer]]:
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM sim_servers").fetchall()
        return [(row[0], _server(row)) for row in rows]

    def count(self) -> int:
        (count,) = self._db.execute("SELECT count(*) FROM sim_servers").fetchone()
        return int(count)

    def close(self) -> None:
        self._db.close()


#: a ``sim_servers`` row, in ``_COLUMNS`` order (the table's column types)
SimRow = tuple[str, str | None, str | None, str | None, str | None, int, int, str, str]


def _server(row: SimRow) -> SimServer:
    server = SimServer(row[1], row[2], row[3])
    server.broken = row[4]
    server.rebooted = row[5]
    server.rebuilt = row[6]
    server.state = row[7]
    server.signals = json.loads(row[8])
    return server
