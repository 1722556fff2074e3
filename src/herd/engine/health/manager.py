"""The health manager: one per engine, checking the clusters whose health lease it holds.

A scheduler thread refreshes the leases once per engine heartbeat, keeps the
members of LIFECYCLE_EVENTS clusters watched by their drivers, turns driver
events into pending failures, and hands rounds to a small pool: a polling round
every ``interval`` seconds, an event round as soon as a failure was reported.
Rounds (:mod:`herd.engine.health.rounds`) recover through CLUSTER_RECOVER
actions that the engine's ordinary dispatcher runs.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from herd.drivers.base import Driver, ResourceEvent
from herd.engine.context import EngineContext
from herd.engine.driver_args import resource_ref
from herd.engine.health.detection import PollUrlClients
from herd.engine.health.leases import LeaseKeeper
from herd.engine.health.rounds import HealthRound
from herd.engine.health.snapshot import profiles_for
from herd.engine.health.state import HeldCluster, PendingEvent
from herd.engine.outbound import OutboundGuard
from herd.errors import HerdError
from herd.policies.health_rules import CHECKABLE, round_due
from herd.policies.health_settings import HealthSettings, read_health_settings
from herd.store import node_reads
from herd.store.health_leases import HealthBinding
from herd.types import NodeStatus

log = logging.getLogger(__name__)

WATCH_SYNC_INTERVAL = 1.0  # seconds between two passes matching watches with members
ROUND_THREADS = 4


class HealthManager:
    """Checks members of leased clusters on their policy's schedule and recovers failures."""

    def __init__(self, ctx: EngineContext, on_recovery: Callable[[], None]) -> None:
        self.ctx = ctx
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.leases = LeaseKeeper(ctx)
        self.clients = PollUrlClients(OutboundGuard.from_settings(ctx.settings))
        self.probes = ThreadPoolExecutor(
            ctx.settings.health_probe_workers, thread_name_prefix="herd-probe"
        )
        self.round_pool = ThreadPoolExecutor(ROUND_THREADS, thread_name_prefix="herd-health")
        self.rounds = HealthRound(ctx, self.probes, self.clients, self._stop, on_recovery)
        self.clusters: dict[str, HeldCluster] = {}
        self._events: queue.SimpleQueue[ResourceEvent] = queue.SimpleQueue()
        self._watch_owner: dict[str, tuple[str, Driver]] = {}  # node id -> (cluster, driver)
        self._thread: threading.Thread | None = None
        unique = {id(d): d for d in (ctx.drivers.get(n) for n in ctx.drivers.names())}
        self._drivers = list(unique.values())

    # -- life ----------------------------------------------------------------------------

    def start(self) -> None:
        for driver in self._drivers:
            driver.add_listener(self._on_event)
        self._thread = threading.Thread(target=self._loop, name="herd-health-manager", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)
        for driver in self._drivers:
            driver.remove_listener(self._on_event)
        for cluster_id in list(self.clusters):
            self._drop(cluster_id)
        self.round_pool.shutdown(wait=True, cancel_futures=True)
        self.probes.shutdown(wait=True, cancel_futures=True)
        self.clients.close()
        try:
            self.leases.release_all()
        except Exception:  # the database may be gone already; the leases then age out
            log.exception("releasing health leases failed")

    def wake(self) -> None:
        self._wake.set()

    def _on_event(self, event: ResourceEvent) -> None:
        # Called on a driver's thread: queue it and let the scheduler thread route it.
        self._events.put(event)
        self._wake.set()

    # -- the scheduler -------------------------------------------------------------------

    def _loop(self) -> None:
        settings = self.ctx.settings
        next_refresh = next_sync = 0.0
        while not self._stop.is_set():
            now = self.ctx.now()
            try:
                if now >= next_refresh:
                    self._refresh(now)
                    next_refresh = now + settings.engine_heartbeat_interval
                if now >= next_sync:
                    self._sync_watches()
                    next_sync = now + WATCH_SYNC_INTERVAL
                self._drain_events(self.ctx.now())
                self._schedule(self.ctx.now())
            except Exception:  # the manager must outlive a database hiccup
                log.exception("health manager pass failed")
            self._wake.wait(settings.health_tick)
            self._wake.clear()

    def _refresh(self, now: float) -> None:
        with self.ctx.metrics.timed("lease"):
            view = self.leases.refresh()
        for cluster_id in [c for c in self.clusters if c not in view.held]:
            self._drop(cluster_id)
        for cluster_id, binding in view.held.items():
            state = self.clusters.get(cluster_id)
            if state is not None and state.policy()[0].spec == binding.spec:
                state.follow(binding)
                continue
            settings = self._settings(binding)
            if settings is None:
                continue
            if state is None:
                self.clusters[cluster_id] = HeldCluster(cluster_id, binding, settings, now)
            else:
                state.follow(binding, settings)

    def _settings(self, binding: HealthBinding) -> HealthSettings | None:
        try:
            _, policy = self.ctx.policies.create(binding.spec)
            found: object = getattr(policy, "settings", None)
            if isinstance(found, HealthSettings):
                return found
            return read_health_settings(policy.properties)
        except HerdError as exc:
            log.warning("health policy %s cannot be followed: %s", binding.policy_id, exc)
            return None

    def _drop(self, cluster_id: str) -> None:
        state = self.clusters.pop(cluster_id, None)
        if state is None:
            return
        for node_id in list(state.watched):
            owner = self._watch_owner.pop(node_id, None)
            if owner is not None:
                owner[1].unwatch(node_id)

    def _drain_events(self, now: float) -> None:
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            owner = self._watch_owner.get(event.node_id)
            state = self.clusters.get(owner[0]) if owner is not None else None
            if state is None or state.watched.get(event.node_id) != event.physical_id:
                continue  # not a node we watch (any more), or an older resource of it
            state.add_event(event.node_id, PendingEvent(event.physical_id, event.reason, now))

    def _schedule(self, now: float) -> None:
        for state in self.clusters.values():
            settings = state.policy()[1]
            poll = bool(settings.polling_modes) and round_due(
                state.last_round, now, settings.interval
            )
            if not poll and not state.has_events(now):
                continue
            if not state.start_round():
                continue  # the last round is still running
            if poll:
                state.last_round = now
            self.round_pool.submit(self._run_round, state, poll)

    def _run_round(self, state: HeldCluster, poll: bool) -> None:
        wake_at: float | None = None
        try:
            wake_at = self.rounds.run(state, poll)
        except Exception:
            log.exception("health round of cluster %s failed", state.cluster_id)
        finally:
            state.end_round(wake_at)

    # -- watching (LIFECYCLE_EVENTS) ----------------------------------------------------

    def _sync_watches(self) -> None:
        """Watch every settled member of event-watching clusters; forget the others."""
        states = {c: s for c, s in self.clusters.items() if s.policy()[1].watches_events}
        if not states:
            return
        cache = self.rounds.profiles
        with self.ctx.database.read() as session:
            rows = node_reads.watch_rows(session, states)
            profiles_for(self.ctx, session, {row.profile_id for row in rows}, cache)
        present: dict[str, set[str]] = {cluster_id: set() for cluster_id in states}
        for row in rows:
            state = states[str(row.cluster_id)]
            present[state.cluster_id].add(row.id)
            profile = cache.get(row.profile_id)
            if NodeStatus(row.status) not in CHECKABLE or not isinstance(profile, tuple):
                continue
            physical_id = row.physical_id or ""
            if state.watched.get(row.id) == physical_id:
                continue
            reported = state.reported.get(row.id)
            if (
                reported is not None
                and reported[0] == physical_id
                and (row.updated_at or 0) <= reported[1]
            ):
                continue  # this failure was reported already; wait for the node to change
            driver = self.ctx.drivers.get(profile[0])
            # Registered before watch(): a driver may report a dead resource from inside it.
            state.watched[row.id] = physical_id
            self._watch_owner[row.id] = (state.cluster_id, driver)
            ref = resource_ref(row, profile[1])
            if not driver.watch(ref):
                state.watched.pop(row.id, None)
        for cluster_id, state in states.items():
            for node_id in [n for n in state.reported if n not in present[cluster_id]]:
                del state.reported[node_id]
            for node_id in [n for n in state.watched if n not in present[cluster_id]]:
                state.watched.pop(node_id, None)
                owner = self._watch_owner.pop(node_id, None)
                if owner is not None:
                    owner[1].unwatch(node_id)
