"""What every part of the engine shares: settings, store, registries, identity and clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from herd.config import Settings
from herd.engine.background import AbandonableCalls
from herd.observability.metrics import HerdMetrics
from herd.store.database import Database
from herd.store.models import ClusterRow

if TYPE_CHECKING:
    from herd.drivers.registry import DriverRegistry
    from herd.policies.registry import PolicyRegistry


@dataclass
class EngineContext:
    settings: Settings
    database: Database
    drivers: DriverRegistry
    policies: PolicyRegistry
    engine_id: str
    clock: Callable[[], float] = field(default=time.time)
    sleep: Callable[[float], None] = field(default=time.sleep)
    #: deletes a cluster's regional copies; returns an error text or None (set by the region layer)
    regions_delete: Callable[[ClusterRow], str | None] | None = None
    #: where the engine records what it does (the process's Prometheus collectors)
    metrics: HerdMetrics = field(default_factory=HerdMetrics)
    #: driver calls a recovery stopped waiting for (slow deletions); the engine joins them
    #: when it stops
    abandonable: AbandonableCalls = field(
        default_factory=lambda: AbandonableCalls("herd-recover-delete")
    )

    def now(self) -> float:
        return self.clock()

    def dead_before(self) -> float:
        """Engines whose heartbeat is older than this are dead."""
        return self.clock() - self.settings.engine_dead_after
