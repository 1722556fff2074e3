"""The API process's own service record: registered at start-up, refreshed, removed at stop.

``GET /v1/services`` shows API processes beside engines; this thread keeps this
process's row fresh so that other processes see it ``up``. It also forgets rows
of API processes that stopped long ago (killed without removing their row).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable

from herd.config import Settings
from herd.store import services as service_store
from herd.store.database import Database

log = logging.getLogger(__name__)

#: a row whose heartbeat stopped this many dead-thresholds ago is deleted
FORGET_AFTER_FACTOR = 30


class ApiHeartbeat:
    """Writes this API process's heartbeat every ``engine_heartbeat_interval`` seconds."""

    def __init__(self, settings: Settings, database: Database, clock: Callable[[], float]) -> None:
        self.settings = settings
        self.database = database
        self.clock = clock
        self.service_id = str(uuid.uuid4())
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self.database.write() as session:
            service_store.register_api(session, self.service_id, self.host, self.pid, self.clock())
        self._thread = threading.Thread(target=self._loop, name="herd-api-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        try:
            with self.database.write() as session:
                service_store.unregister_api(session, self.service_id)
        except Exception:  # the database may already be gone at shutdown
            log.warning("could not remove the API service row %s", self.service_id)

    def _loop(self) -> None:
        interval = self.settings.engine_heartbeat_interval
        forget = self.settings.engine_dead_after * FORGET_AFTER_FACTOR
        while not self._stop.wait(interval):
            try:
                now = self.clock()
                with self.database.write() as session:
                    service_store.beat_api(session, self.service_id, self.host, self.pid, now)
                    service_store.forget_api_before(session, now - forget)
            except Exception:  # the heartbeat must outlive a database hiccup
                log.exception("API heartbeat failed")
