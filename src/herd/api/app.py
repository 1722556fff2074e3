"""The FastAPI application: ``create_app(settings)``.

Everything the app holds lives on ``app.state.herd`` (a :class:`Services`);
nothing is built at import time. The engine is imported lazily inside the
lifespan, so the API can run (and be tested) without it.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI

from herd.api import access_log, errors, input_guard
from herd.api.deps import Services
from herd.api.etag import ConditionalGetMiddleware
from herd.api.finished_request import FinishedRequestMiddleware
from herd.api.head import HeadAsGetMiddleware
from herd.api.heartbeat import ApiHeartbeat
from herd.api.limits import BodyLimitMiddleware
from herd.api.metrics import install_metrics
from herd.api.microversion import MicroversionMiddleware
from herd.api.openapi import install_openapi
from herd.api.request_id import RequestIdMiddleware
from herd.api.routers import (
    actions,
    adopt,
    cluster_actions,
    cluster_health,
    cluster_metadata,
    cluster_policies,
    cluster_sizes,
    clusters,
    constants,
    deletions,
    events,
    health,
    member_health,
    nodes,
    operations,
    profiles,
    receivers,
    relocation,
    types,
    versions,
    webhooks,
)
from herd.api.routers import policies as policy_routes
from herd.api.routers import services as service_routes
from herd.api.services import live_details
from herd.api.ui import install_ui
from herd.api.webhook_key import load_webhook_key
from herd.config import Settings
from herd.store.database import Database

if TYPE_CHECKING:
    from herd.drivers.registry import DriverRegistry
    from herd.policies.registry import PolicyRegistry
    from herd.regions import Regions

log = logging.getLogger("herd.api")


def _default_drivers(settings: Settings, database: Database) -> DriverRegistry:
    from herd.drivers.nova.cloud import NovaOptions
    from herd.drivers.registry import default_driver_registry
    from herd.store.credentials import trusted_connections

    return default_driver_registry(
        settings.data_dir,
        sim_state_file=settings.sim_state_file(),
        nova=NovaOptions.from_settings(settings),
        nova_trusts=trusted_connections(settings, database),
        heat_cloud=settings.heat_cloud,
    )


def _default_policies() -> PolicyRegistry:
    from herd.policies.registry import default_policy_registry

    return default_policy_registry()


def create_app(
    settings: Settings,
    *,
    database: Database | None = None,
    start_engine: bool | None = None,
    drivers: DriverRegistry | None = None,
    policies: PolicyRegistry | None = None,
    clock: Callable[[], float] | None = None,
    regions: Regions | None = None,
    tombstones: bool = True,
) -> FastAPI:
    """Build the API app.

    Args:
        settings: the service settings.
        database: an existing database (the app then does not dispose it);
            by default one is built from ``settings.database_url()``.
        start_engine: run the engine inside the app's lifespan; defaults to
            ``settings.run_engine``.
        drivers: a driver registry (default: ``default_driver_registry``).
        policies: a policy registry (default: ``default_policy_registry``).
        clock: the wall clock (epoch seconds), injectable for tests.
        regions: the regions' backends (default: opened from ``settings.regions``); the app
            closes the ones it opened itself.
        tombstones: False makes deletions leave no tombstone. Tests use it to show the
            resurrection race that tombstones prevent; no setting reaches it, so a
            ``herd serve`` always keeps them.
    """
    owns_database = database is None
    db = (
        database
        if database is not None
        else Database(
            settings.database_url(),
            sqlite_synchronous=settings.sqlite_synchronous,
            member_cache_members=settings.member_cache_members,
        )
    )
    db.migrate()
    # Drivers the app builds are the app's to close (their watcher threads stop with it).
    owned_drivers: DriverRegistry | None = None
    if drivers is None:
        drivers = owned_drivers = _default_drivers(settings, db)
    services = Services(
        settings=settings,
        database=db,
        drivers=drivers,
        policies=policies if policies is not None else _default_policies(),
        clock=clock or time.time,
        tombstones=tombstones,
        webhook_key=load_webhook_key(settings),
    )
    run_engine = settings.run_engine if start_engine is None else start_engine
    owns_regions = regions is None and bool(settings.regions)
    if owns_regions:
        from herd.regions import Regions as OpenRegions

        regions = OpenRegions.from_settings(settings)
    if regions is not None:
        # The API purges copies of stuck deletions; the engine deletes copies in CLUSTER_DELETE.
        services.extra["regions"] = regions

    heartbeat = ApiHeartbeat(settings, db, services.clock)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        heartbeat.start()
        if run_engine:
            from herd.engine.service import EngineService

            engine = EngineService(
                settings,
                db,
                services.drivers,
                services.policies,
                regions_delete=regions.delete_copies if regions is not None else None,
                metrics=services.metrics,
            )
            engine.start()
            services.engine = engine
        try:
            yield
        finally:
            if services.engine is not None:
                services.engine.stop()
                services.engine = None
            heartbeat.stop()
            reads = services.extra.pop(live_details.BACKEND_READS, None)
            if reads is not None:
                reads.close()
            if owned_drivers is not None:
                owned_drivers.close()
            if owns_regions and regions is not None:
                regions.close()
            if owns_database:
                db.dispose()

    # A body without a Content-Type is JSON, as Senlin reads it (its clients send some
    # without: tempest's validate calls). FastAPI since it grew strict_content_type
    # would read no body at all.
    lenient: dict[str, Any] = (
        {"strict_content_type": False}
        if "strict_content_type" in inspect.signature(FastAPI).parameters
        else {}
    )
    app = FastAPI(
        # Every route: a path or query parameter no store can hold is a 400, not a 500.
        dependencies=[Depends(input_guard.check_parameters)],
        **lenient,
        title="herd",
        summary="Clustering service, wire-compatible with the OpenStack clustering API v1.",
        version="1.14",
        lifespan=lifespan,
    )
    app.state.herd = services
    errors.install(app)
    app.add_middleware(errors.UnexpectedErrorMiddleware)  # innermost: a 500 keeps the connection
    app.add_middleware(BodyLimitMiddleware, settings=settings)  # 413 while a body streams in
    app.add_middleware(MicroversionMiddleware)
    app.add_middleware(ConditionalGetMiddleware)
    app.add_middleware(HeadAsGetMiddleware)
    # Starlette tries routes in order: the hottest (node reads, marks) go first.
    for module in (
        nodes,
        member_health,
        versions,
        constants,
        health,
        profiles,
        types,
        policy_routes,
        clusters,
        cluster_actions,
        cluster_policies,
        cluster_health,
        cluster_sizes,
        actions,
        events,
        deletions,
        service_routes,
        adopt,
        cluster_metadata,
        operations,
        relocation,
        receivers,
        webhooks,
    ):
        app.include_router(module.router)
    if settings.auth == "keystone":
        from herd.api.keystone import KeystoneAuth, route_templates

        services.extra["keystone"] = KeystoneAuth(settings, route_templates(app.routes))
        if settings.nova_trusts:
            from herd.api.trusts import TrustMaker

            services.extra["trusts"] = TrustMaker(settings)
    install_openapi(app)
    count_request = install_metrics(app, services)
    install_ui(app)
    # The metrics and the access line (inside the request id: the line carries it), in one
    # layer; the metrics first, as when each had a layer of its own.
    app.add_middleware(FinishedRequestMiddleware, hooks=[count_request, access_log.log_request])
    app.add_middleware(RequestIdMiddleware)  # outermost: every answer carries the id
    return app
