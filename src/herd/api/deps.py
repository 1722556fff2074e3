"""What every endpoint receives: the app's services and the caller's context."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from herd.config import Settings
from herd.observability.metrics import HerdMetrics
from herd.store.database import Database

if TYPE_CHECKING:
    # Imported for the annotations only: the registries load every plugin.
    from herd.drivers.registry import DriverRegistry
    from herd.engine.service import EngineService
    from herd.policies.registry import PolicyRegistry


@dataclass
class Services:
    """Everything the routers need, kept on ``app.state.herd`` (no module globals)."""

    settings: Settings
    database: Database
    drivers: DriverRegistry
    policies: PolicyRegistry
    clock: Callable[[], float] = time.time
    #: False only in tests that show what tombstones prevent (no setting turns them off)
    tombstones: bool = True
    #: the engine running in this process (``run_engine``), else None
    engine: EngineService | None = None
    #: what receivers' webhook secrets are derived from (api/webhook_key.py)
    webhook_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    extra: dict[str, Any] = field(default_factory=dict)
    #: this process's Prometheus collectors (the engine in the same process shares them)
    metrics: HerdMetrics = field(default_factory=HerdMetrics)

    def now(self) -> float:
        return self.clock()

    def dead_before(self) -> float:
        return self.clock() - self.settings.engine_dead_after


async def get_services(request: Request) -> Services:
    services: Services = request.app.state.herd
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


P = ParamSpec("P")
T = TypeVar("T")


async def run_database(
    services: Services, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run a short database call from an ``async`` handler.

    The call runs on the event loop unless ``settings.api_database_threads`` says
    otherwise. A read on SQLite (WAL) never waits for a writer, and one on PostgreSQL
    never waits for a lock; a local database answers in well under a millisecond. A
    thread pool would cost more than that: the hop, and (measured on PostgreSQL) the
    pool thread waiting for the GIL after every round trip while the loop is busy.
    """
    if services.settings.api_database_threads:
        return await run_in_threadpool(work, *args, **kwargs)
    return work(*args, **kwargs)
