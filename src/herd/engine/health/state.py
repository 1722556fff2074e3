"""What the health manager keeps in memory for each cluster it holds the lease of.

The stored truth (check records, back-off, leases) is in the database; this is
only the schedule (when the last polling round ran), the driver events not yet
acted on, and which nodes are being watched. A new lease holder rebuilds it:
re-watching the members reports every process that died meanwhile.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from herd.policies.health_settings import HealthSettings
from herd.store.health_leases import HealthBinding


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """A failure a driver reported for a node, waiting for a round to act on it."""

    physical_id: str
    reason: str
    at: float


@dataclass
class HeldCluster:
    """A cluster whose health lease this engine holds: its schedule, pending events, watches.

    (Not the planner's ``ClusterState``, a Ganeti cluster's placement.)

    Lock discipline (three threads meet here; driver threads never do, their events reach
    the scheduler through the manager's queue):

    * ``lock`` guards what the scheduler thread and the cluster's round (on the round pool)
      share: ``binding`` and ``settings`` (replaced together by :meth:`follow`, read
      together by :meth:`policy`), ``events``, ``wake_at`` and ``running``. Touch them only
      through the methods below.
    * The scheduler thread alone (``HealthManager``'s loop) uses ``last_round``, ``watched``
      and ``reported``, without the lock.
    * The round alone uses ``suspended``: one round at a time per cluster
      (:meth:`start_round`/:meth:`end_round`).
    """

    cluster_id: str
    binding: HealthBinding
    settings: HealthSettings
    last_round: float  # when the last polling round started (the first is one interval in)
    events: dict[str, PendingEvent] = field(default_factory=dict)  # node id -> event
    #: event rounds wait until then (a deferred recovery's back-off end), unless a new event
    wake_at: float = 0.0
    running: bool = False  # a round is on the pool
    suspended: bool = False  # the last round found checks suspended (for transition events)
    watched: dict[str, str] = field(default_factory=dict)  # node id -> physical id watched
    #: failures already reported per node: (physical id, when); not watched again until the
    #: node changes (a new resource, or a recovery in place bumped updated_at)
    reported: dict[str, tuple[str, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def policy(self) -> tuple[HealthBinding, HealthSettings]:
        """The binding followed and its settings, as one pair (a round reads them once)."""
        with self.lock:
            return self.binding, self.settings

    def follow(self, binding: HealthBinding, settings: HealthSettings | None = None) -> None:
        """Follow a refreshed binding (with new settings when its spec changed)."""
        with self.lock:
            self.binding = binding
            if settings is not None:
                self.settings = settings

    def start_round(self) -> bool:
        """Claim the cluster for a round; False when one is running already."""
        with self.lock:
            if self.running:
                return False
            self.running = True
            return True

    def end_round(self, wake_at: float | None = None) -> None:
        """The round is over (``wake_at``: when event rounds may run again)."""
        with self.lock:
            self.running = False
            if wake_at is not None:
                self.wake_at = wake_at

    def add_event(self, node_id: str, event: PendingEvent) -> None:
        """Queue a driver's report (scheduler thread: it also updates the watches)."""
        with self.lock:
            self.events[node_id] = event
            self.wake_at = 0.0
        self.reported[node_id] = (event.physical_id, event.at)
        self.watched.pop(node_id, None)

    def take_events(self) -> dict[str, PendingEvent]:
        with self.lock:
            return dict(self.events)

    def consume(self, done: dict[str, PendingEvent]) -> None:
        """Drop events a round acted on (unless a newer one replaced them meanwhile)."""
        with self.lock:
            for node_id, event in done.items():
                if self.events.get(node_id) is event:
                    del self.events[node_id]

    def has_events(self, now: float) -> bool:
        with self.lock:
            return bool(self.events) and now >= self.wake_at
