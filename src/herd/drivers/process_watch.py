"""Noticing at once that a node process ended: one thread polling pidfds.

``os.pidfd_open`` gives a file descriptor that becomes readable when the
process exits, whether or not it is a child of this process, so the same
mechanism covers processes spawned by this engine and processes re-attached
after an engine restart (or started by another engine on this host). One
thread waits on all of them with ``poll``; other threads only queue requests
and wake it through a pipe, so the poll set is touched by one thread alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass

from herd.drivers.procfs import read_proc

log = logging.getLogger(__name__)

#: called with (node_id, physical_id, pid) when a watched process has ended
ExitCallback = Callable[[str, str, int], None]


@dataclass(frozen=True, slots=True)
class _Watch:
    node_id: str
    physical_id: str
    pid: int
    start_time: int


class ExitWatcher:
    """Calls ``on_exit`` once for each watched process that ends."""

    def __init__(self, on_exit: ExitCallback) -> None:
        self._on_exit = on_exit
        self._requests: queue.SimpleQueue[tuple[str, _Watch | str | None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake_read, self._wake_write = -1, -1
        self._watched: dict[str, str] = {}  # node id -> physical id (what callers asked for)

    def watch(self, node_id: str, physical_id: str, pid: int, start_time: int) -> None:
        """Watch a process; one already gone (or a reused pid) is reported at once."""
        with self._lock:
            if self._watched.get(node_id) == physical_id:
                return
            self._watched[node_id] = physical_id
            self._ensure_thread()
        self._send(("watch", _Watch(node_id, physical_id, pid, start_time)))

    def unwatch(self, node_id: str) -> None:
        """Forget a node (its process is being stopped on purpose)."""
        with self._lock:
            if self._watched.pop(node_id, None) is None:
                return
        self._send(("unwatch", node_id))

    def watched(self) -> dict[str, str]:
        with self._lock:
            return dict(self._watched)

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            self._watched.clear()
        if thread is not None:
            self._send(("stop", None))
            thread.join(5)

    # -- the watcher thread ---------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        self._thread = threading.Thread(target=self._run, name="herd-exit-watcher", daemon=True)
        self._thread.start()

    def _send(self, request: tuple[str, _Watch | str | None]) -> None:
        self._requests.put(request)
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._wake_read, select.POLLIN)
        by_fd: dict[int, _Watch] = {}
        fd_of: dict[str, int] = {}
        try:
            while True:
                for fd, _events in poller.poll():
                    if fd == self._wake_read:
                        with contextlib.suppress(BlockingIOError):
                            os.read(self._wake_read, 4096)
                        continue
                    watch = by_fd.pop(fd, None)
                    poller.unregister(fd)
                    os.close(fd)
                    if watch is not None:
                        fd_of.pop(watch.node_id, None)
                        self._ended(watch)
                while True:
                    try:
                        kind, item = self._requests.get_nowait()
                    except queue.Empty:
                        break
                    if kind == "stop":
                        return
                    if kind == "unwatch" and isinstance(item, str):
                        fd = fd_of.pop(item, -1)
                        if fd >= 0:
                            by_fd.pop(fd, None)
                            poller.unregister(fd)
                            os.close(fd)
                    elif kind == "watch" and isinstance(item, _Watch):
                        old = fd_of.pop(item.node_id, -1)
                        if old >= 0:
                            by_fd.pop(old, None)
                            poller.unregister(old)
                            os.close(old)
                        opened = self._open(item)
                        if opened is None:
                            self._ended(item)
                        else:
                            by_fd[opened] = item
                            fd_of[item.node_id] = opened
                            poller.register(opened, select.POLLIN)
        finally:
            for fd in by_fd:
                with contextlib.suppress(OSError):
                    os.close(fd)
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    @staticmethod
    def _open(watch: _Watch) -> int | None:
        """A pidfd for the watched process, or None when it is already gone."""
        try:
            fd = os.pidfd_open(watch.pid)
        except ProcessLookupError:
            return None
        # The pid could have been reused before we opened it: the start time tells.
        info = read_proc(watch.pid)
        if info is None or info.start_time != watch.start_time or info.zombie:
            os.close(fd)
            return None
        return fd

    def _ended(self, watch: _Watch) -> None:
        with self._lock:
            if self._watched.get(watch.node_id) != watch.physical_id:
                return  # unwatched (stopped on purpose) or replaced meanwhile
            del self._watched[watch.node_id]
        try:
            self._on_exit(watch.node_id, watch.physical_id, watch.pid)
        except Exception:
            log.exception("exit callback failed for node %s", watch.node_id)
