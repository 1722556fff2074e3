"""Calls a caller may stop waiting for, each on its own thread, owned and joined at shutdown.

A recovery deletes the old resource within ``node_delete_timeout``; a driver call
cannot be interrupted, so a slow one goes on running after the recovery has
moved on (``node_force_recreate``). Such calls run here instead of on threads
nobody holds: the engine owns one :class:`AbandonableCalls` (in its context) and,
when it stops, waits a bounded time for what still runs and logs what it left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class AbandonableCalls:
    """Runs calls on their own threads; tracks each until it returns."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._running: set[threading.Thread] = set()
        self._lock = threading.Lock()  # guards _running

    def run(self, call: Callable[[], object], timeout: float) -> bool:
        """Run ``call`` and wait up to ``timeout`` seconds; whether it has returned.

        A call that has not returned keeps running, tracked, until it returns or
        :meth:`close` gives up on it.
        """

        def tracked() -> None:
            try:
                call()
            finally:
                with self._lock:
                    self._running.discard(threading.current_thread())

        # Daemon: a call that outlives close() must not keep the process from exiting.
        thread = threading.Thread(target=tracked, name=self.name, daemon=True)
        with self._lock:
            self._running.add(thread)
        thread.start()
        thread.join(timeout)
        return not thread.is_alive()

    def running(self) -> int:
        """How many calls have not returned yet."""
        with self._lock:
            return len(self._running)

    def close(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds in all for the running calls; how many were left."""
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._running)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = sum(thread.is_alive() for thread in threads)
        if left:
            log.warning("%s: stopped waiting for %d call(s) still running", self.name, left)
        return left
