"""The engine process: heartbeat, take-over of dead engines, and the dispatcher.

Threads, not asyncio (docs/architecture.md says why): drivers block on
processes and sockets, SQLAlchemy sessions are synchronous, and a handler that
waits for a lifecycle hook simply sleeps in its own thread. Top-level actions
run on a worker pool; their node-level driver calls run on a second pool so a
parent waiting for its children can never starve them.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from herd.config import Settings
from herd.engine.actions import handler_table
from herd.engine.context import EngineContext
from herd.engine.health.manager import HealthManager
from herd.engine.nodeops import NodeOperations
from herd.engine.recovery import (
    fail_stuck_children,
    reconcile_resources,
    resume_deletions,
    take_over,
)
from herd.engine.runner import ActionRunner
from herd.observability import logs
from herd.observability.metrics import HerdMetrics
from herd.store import actions as action_store
from herd.store import engines
from herd.store.database import Database
from herd.store.models import ActionRow, ClusterRow
from herd.store.wakeups import ReadyListener

if TYPE_CHECKING:
    from herd.drivers.registry import DriverRegistry
    from herd.policies.registry import PolicyRegistry

log = logging.getLogger(__name__)

#: seconds between two looks at the queue of an idle engine whose listener is up
LISTENING_POLL = 1.0


class EngineService:
    """Claims READY actions from the store and runs them until stopped."""

    def __init__(
        self,
        settings: Settings,
        database: Database,
        drivers: DriverRegistry,
        policies: PolicyRegistry,
        *,
        engine_id: str | None = None,
        regions_delete: Callable[[ClusterRow], str | None] | None = None,
        metrics: HerdMetrics | None = None,
    ) -> None:
        self.ctx = EngineContext(
            settings=settings,
            database=database,
            drivers=drivers,
            policies=policies,
            engine_id=engine_id or str(uuid.uuid4()),
            regions_delete=regions_delete,
            metrics=metrics if metrics is not None else HerdMetrics(),
        )
        self.workers = ThreadPoolExecutor(settings.engine_workers, thread_name_prefix="herd-action")
        self.child_pool = ThreadPoolExecutor(
            max(32, settings.engine_workers * 2), thread_name_prefix="herd-node"
        )
        self.nodeops = NodeOperations(self.ctx, self.child_pool)
        self.runner = ActionRunner(self.ctx, handler_table(self.nodeops, self.child_pool))
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._in_flight = 0
        #: guards ``_in_flight`` only (the dispatcher adds, the action pool's threads subtract)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        # Actions stored by other processes wake the dispatcher at once (PostgreSQL).
        self.listener = ReadyListener(database, self.notify)
        self.health: HealthManager | None = (
            HealthManager(self.ctx, self.notify) if settings.health_manager else None
        )

    @property
    def engine_id(self) -> str:
        return self.ctx.engine_id

    def start(self) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            engines.register(session, self.engine_id, socket.gethostname(), os.getpid(), now)
        take_over(self.ctx)
        fail_stuck_children(self.ctx)
        resumed = resume_deletions(self.ctx)
        if any(resumed.values()):
            log.warning("deletions: %s", resumed)
        counts = reconcile_resources(self.ctx)
        if any(counts.values()):
            log.warning("resource reconciliation: %s", counts)
        self.ctx.metrics.engine_running.set(1)
        self.ctx.metrics.engine_heartbeat.set(now)
        for target, name in (
            (self._heartbeat_loop, "herd-heartbeat"),
            (self._dispatch_loop, "herd-dispatcher"),
        ):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        self.listener.start()
        if self.health is not None:
            self.health.start()

    def notify(self) -> None:
        """Wake the dispatcher now (the API calls this after storing an action)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        if self.health is not None:
            self.health.stop()
        self.listener.stop()
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self.workers.shutdown(wait=True, cancel_futures=True)
        self.child_pool.shutdown(wait=False, cancel_futures=True)
        self.ctx.abandonable.close(timeout)
        self.ctx.metrics.engine_running.set(0)
        with self.ctx.database.write() as session:
            engines.remove(session, self.engine_id)

    # -- loops -------------------------------------------------------------------------

    def _heartbeat_loop(self) -> None:
        beats = 0
        while not self._stop.wait(self.ctx.settings.engine_heartbeat_interval):
            try:
                beat = self.ctx.now()
                metrics = self.ctx.metrics
                with metrics.timed("heartbeat"), self.ctx.database.write() as session:
                    engines.beat(session, self.engine_id, beat)
                metrics.engine_heartbeat.set(beat)
                beats += 1
                if beats % 3 == 0:
                    with metrics.timed("takeover"):
                        requeued = take_over(self.ctx)
                    if requeued:
                        self._wake.set()
            except Exception:  # the heartbeat must outlive a database hiccup
                log.exception("engine heartbeat failed")

    def _dispatch_loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                free = self.ctx.settings.engine_workers - self._in_flight
            claimed: list[ActionRow] = []
            if free > 0:
                try:
                    with (
                        self.ctx.metrics.timed("claim"),
                        self.ctx.database.write() as session,
                    ):
                        claimed = action_store.claim_ready_rows(
                            session, self.engine_id, free, self.ctx.now()
                        )
                except Exception:
                    log.exception("claiming actions failed")
            for row in claimed:
                with self._lock:
                    self._in_flight += 1
                self.ctx.metrics.engine_in_flight.inc()
                self.workers.submit(self._run, row.id, row)
            if not claimed:
                self._wake.wait(self._idle_wait())
                self._wake.clear()

    def _idle_wait(self) -> float:
        """Seconds the dispatcher waits for a wake-up before it looks at the queue again.

        While the listener is up, every READY action is announced (and the engine wakes
        itself when one of its own actions ends), so the poll is only the fallback: a
        fifth of a second per idle engine was most of the claims four engines made.
        """
        poll = self.ctx.settings.engine_poll_interval * 4
        return max(poll, LISTENING_POLL) if self.listener.listening else poll

    def _run(self, action_id: str, row: ActionRow | None = None) -> None:
        try:
            self.runner.run(action_id, row)
        except Exception:
            log.exception("action %s failed outside its handler", action_id)
        finally:
            with self._lock:
                self._in_flight -= 1
            self.ctx.metrics.engine_in_flight.dec()
            self._wake.set()


def build_engine(
    settings: Settings,
    database: Database,
    *,
    regions_delete: Callable[[ClusterRow], str | None] | None = None,
    metrics: HerdMetrics | None = None,
) -> EngineService:
    """An engine with the default registries.

    Args:
        settings: the service settings.
        database: the central store.
        regions_delete: deletes a cluster's regional copies (``herd.regions.Regions
            .delete_copies``). The region layer sits beside the engine, so the
            caller (the API app, a test) builds it and hands it in. When regions
            are configured and none is given, CLUSTER_DELETE fails with a reason
            rather than leave copies behind.
        metrics: where the engine records what it does (a new set by default).
    """
    from herd.drivers.nova.cloud import NovaOptions
    from herd.drivers.registry import default_driver_registry
    from herd.policies.registry import default_policy_registry
    from herd.store.credentials import trusted_connections

    return EngineService(
        settings,
        database,
        default_driver_registry(
            settings.data_dir,
            sim_state_file=settings.sim_state_file(),
            nova=NovaOptions.from_settings(settings),
            nova_trusts=trusted_connections(settings, database),
            heat_cloud=settings.heat_cloud,
        ),
        default_policy_registry(),
        regions_delete=regions_delete,
        metrics=metrics,
    )


def run_forever(
    settings: Settings, *, regions_delete: Callable[[ClusterRow], str | None] | None = None
) -> None:
    """``herd engine``: run an engine without the API until SIGINT or SIGTERM.

    ``regions_delete`` is passed in by the caller (the CLI) because the region layer
    sits beside the engine and cannot be imported from here.
    """
    logs.configure(settings.log_format)
    database = Database(
        settings.database_url(),
        sqlite_synchronous=settings.sqlite_synchronous,
        member_cache_members=settings.member_cache_members,
    )
    database.migrate()
    metrics = HerdMetrics()
    metrics_server = None
    if settings.engine_metrics_port is not None:
        from prometheus_client import start_http_server

        metrics_server = start_http_server(
            settings.engine_metrics_port, "127.0.0.1", registry=metrics.registry
        )
    engine = build_engine(settings, database, regions_delete=regions_delete, metrics=metrics)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    engine.start()
    log.info("herd engine %s running on %s", engine.engine_id, settings.database_url())
    stopped.wait()
    engine.stop()
    engine.ctx.drivers.close()
    if metrics_server is not None:
        httpd, thread = metrics_server
        httpd.shutdown()
        thread.join(10)
