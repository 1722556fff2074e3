"""Waking engines in other processes when an action becomes READY (PostgreSQL LISTEN/NOTIFY).

An engine in the API's process is woken by a callback after the commit. Engines in other
processes (``herd engine``, and every engine beside an API-only ``herd serve --no-engine``)
used to learn of a new action only at their next poll of the queue, a fifth of a second
later on average half of that: with latency-bound actions that wait was a third of an
action's life. On PostgreSQL the transaction that stores a top-level READY action sends
``NOTIFY`` (delivered at commit, dropped on rollback, several of one transaction delivered
once), and each engine keeps one connection that LISTENs and wakes its dispatcher. The poll
stays, as the fallback for a lost connection and for SQLite, which has no such channel.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg
from sqlalchemy import text
from sqlalchemy.orm import Session

from herd.store.database import Database

log = logging.getLogger(__name__)

#: the channel READY top-level actions are announced on
READY_CHANNEL = "herd_actions_ready"
#: seconds between two tries when the listening connection is lost
RECONNECT_AFTER = 1.0


def announce_ready(session: Session) -> None:
    """Tell listening engines, at commit, that a top-level action is READY (PostgreSQL only)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text(f"NOTIFY {READY_CHANNEL}"))


class ReadyListener:
    """Calls ``wake`` whenever any process announces a READY action; idle on SQLite."""

    def __init__(self, database: Database, wake: Callable[[], None]) -> None:
        self.database = database
        self.wake = wake
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: whether announcements reach this process now (its LISTEN connection is up)
        self.listening = False

    def start(self) -> None:
        if self.database.is_sqlite:
            return
        self._thread = threading.Thread(target=self._run, name="herd-listen", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _connect(self) -> psycopg.Connection[tuple[object, ...]]:
        engine = self.database.write_engine
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        return psycopg.connect(*args, **kwargs, autocommit=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self._connect() as connection:
                    connection.execute(f"LISTEN {READY_CHANNEL}")
                    self.listening = True
                    self.wake()  # whatever was announced while nobody listened
                    while not self._stop.is_set():
                        for _ in connection.notifies(timeout=0.5):
                            self.wake()
            except psycopg.Error as exc:
                self.listening = False
                log.warning("listening for new actions failed (polling meanwhile): %s", exc)
                self._stop.wait(RECONNECT_AFTER)
        self.listening = False
