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
class ClusterState:
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

    def add_event(self, node_id: str, event: PendingEvent) -> None:
        with self.lock:
            self.events[node_id] = event
            self.reported[node_id] = (event.physical_id, event.at)
            self.watched.pop(node_id, None)
            self.wake_at = 0.0

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
