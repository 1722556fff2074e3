"""The ``sim`` region backend: a region's copies in a database of their own.

Each region has its own store (by default ``<data_dir>/regions/<name>.db``, or
the URL in its ``RegionConfig``). The central engine and the region's agent open
the same store, from one process or several (SQLite in WAL mode serialises
their writes; on PostgreSQL each write takes an exclusive table lock), which is
what makes ``create_from`` and ``delete`` mutually exclusive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import Float, Integer, String, select, text
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from herd.regions.backend import CopyEvent, Fetch, RegionalCopy
from herd.store.database import Database


class _RegionBase(DeclarativeBase):
    pass


class CopyRow(_RegionBase):
    __tablename__ = "regional_clusters"

    cluster_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    project: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(64))


class HistoryRow(_RegionBase):
    __tablename__ = "regional_history"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cluster_id: Mapped[str] = mapped_column(String(36), index=True)
    op: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))
    at: Mapped[float] = mapped_column(Float)


class SimRegionBackend:
    """Regional copies in a small database; thread-safe and safe across processes."""

    def __init__(
        self,
        name: str,
        url: str,
        *,
        delete_latency: float = 0.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Open (and create if needed) the region's store at ``url``."""
        self.name = name
        self.delete_latency = delete_latency
        self._clock = clock
        self._sleep = sleep
        self._db = Database(url)
        # Threads of one process queue here rather than in SQLite's busy handler,
        # which polls with growing sleeps and can starve a waiter.
        self._write_lock = threading.Lock()
        self._create_tables()

    def _create_tables(self) -> None:
        for attempt in range(5):
            try:
                _RegionBase.metadata.create_all(self._db.write_engine)
                return
            except (OperationalError, ProgrammingError):
                # central and an agent may create the tables at the same moment
                if attempt == 4:
                    raise
                self._sleep(0.2 * (attempt + 1))

    @contextmanager
    def _locked(self) -> Iterator[Session]:
        with self._write_lock, self._db.write() as session:
            if not self._db.is_sqlite:
                # SQLite's BEGIN IMMEDIATE already holds the write lock.
                session.execute(text("LOCK TABLE regional_clusters IN EXCLUSIVE MODE"))
            yield session

    def _copy(self, row: CopyRow) -> RegionalCopy:
        return RegionalCopy(row.cluster_id, row.name, row.project, row.created_at, self.name)

    def get(self, cluster_id: str) -> RegionalCopy | None:
        """The copy of one cluster, or None."""
        with self._db.read() as session:
            row = session.get(CopyRow, cluster_id)
            return self._copy(row) if row is not None else None

    def copies(self) -> list[RegionalCopy]:
        """Every copy in the region."""
        with self._db.read() as session:
            rows = session.scalars(select(CopyRow).order_by(CopyRow.cluster_id)).all()
            return [self._copy(row) for row in rows]

    def create_from(self, cluster_id: str, fetch: Fetch, actor: str) -> RegionalCopy | None:
        """Return the existing copy, or create one from ``fetch()`` under the region's lock."""
        existing = self.get(cluster_id)
        if existing is not None:
            return existing
        with self._locked() as session:
            row = session.get(CopyRow, cluster_id)
            if row is not None:
                return self._copy(row)
            wanted = fetch()
            if wanted is None:
                return None
            now = self._clock()
            session.add(
                CopyRow(
                    cluster_id=cluster_id,
                    name=wanted.name,
                    project=wanted.project,
                    created_at=now,
                    created_by=actor,
                )
            )
            session.add(HistoryRow(cluster_id=cluster_id, op="CREATE", actor=actor, at=now))
            return RegionalCopy(cluster_id, wanted.name, wanted.project, now, self.name)

    def delete(self, cluster_id: str, actor: str) -> bool:
        """Delete a copy; return False when there was none (deleting is idempotent)."""
        if self.delete_latency:
            self._sleep(self.delete_latency)
        with self._locked() as session:
            row = session.get(CopyRow, cluster_id)
            if row is None:
                return False
            session.delete(row)
            session.add(
                HistoryRow(cluster_id=cluster_id, op="DELETE", actor=actor, at=self._clock())
            )
            return True

    def history(self) -> list[CopyEvent]:
        """Every create and delete of copies, oldest first."""
        with self._db.read() as session:
            rows = session.scalars(select(HistoryRow).order_by(HistoryRow.id)).all()
            return [CopyEvent(r.cluster_id, r.op, r.actor, r.at) for r in rows]

    def close(self) -> None:
        """Release connections."""
        self._db.dispose()
