"""Run the API (and, per settings, the engine) under uvicorn."""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING

from herd.config import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI

#: the environment variable that hands the parent's settings to ``--workers`` processes
WORKER_SETTINGS = "_HERD_WORKER_SETTINGS"
#: tells ``--workers`` processes whether their parent runs the engine ("running" or "off")
PARENT_ENGINE = "_HERD_PARENT_ENGINE"


def serve(settings: Settings) -> None:
    """Serve the API on ``settings.host:settings.port`` until interrupted.

    With ``api_workers`` above 1 the API runs in that many uvicorn worker processes
    (:func:`serve_workers`); otherwise in this process, with the engine beside it.
    """
    import uvicorn

    from herd.api.app import create_app
    from herd.observability import logs

    logs.configure(settings.log_format)
    if settings.api_workers > 1:
        serve_workers(settings)
        return
    app = create_app(settings)
    quiet_garbage_collector()
    # log_config=None: uvicorn keeps the handlers configured above instead of its own.
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        access_log=False,
        log_config=None,
        timeout_keep_alive=settings.api_keep_alive,
    )


#: container objects allocated (net) between two young-generation collections (Python: 700)
YOUNG_GENERATION_THRESHOLD = 50_000


def quiet_garbage_collector() -> None:
    """Keep the server's long-lived heap out of the garbage collector's way.

    The heap a server holds (FastAPI, SQLAlchemy, pydantic and herd's modules, the app)
    is large and lives as long as the process. Each full collection walked all of it and
    held every thread for 90 to 120 ms, about once a second under load: that pause was
    the mark PATCH's p99 (docs/benchmarks.md). Frozen, those objects are never examined
    again (Python's documentation recommends the same before forking workers); garbage
    cycles among them would never be freed, and there are none worth speaking of once
    the app is built.

    A young generation of 50,000 objects instead of 700: a scale of 10,000 nodes makes
    rows, parameters and results by the hundred thousand, nearly all freed by reference
    counting within a batch. With 700 the collector ran about 1,500 times during a
    scale-out and scale-in and promoted what was alive at each run, which a dozen full
    collections then walked again: 0.6 s of collection in about 4 s. With 50,000 it
    runs about a dozen times (0.3 s); a young collection takes up to 15 to 20 ms.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)


def serve_workers(settings: Settings) -> None:
    """``herd serve --workers N``: N API processes, and the one engine in this process.

    The parent migrates the database before any worker starts (so workers never race
    on migrations) and runs the only engine (unless ``run_engine`` is off); the workers
    run the API with the engine off, whatever the environment says, so the engine never
    runs twice by accident. Workers are uvicorn's (spawned, not forked: no engine thread is
    copied into them); they receive the parent's settings exactly, through the environment.
    Actions submitted by a worker reach the engine through the database: an idle engine
    looks at its queue every 4 x ``engine_poll_interval`` seconds.
    """
    import uvicorn

    from herd.engine.service import build_engine
    from herd.regions import Regions
    from herd.store.database import Database

    database = Database(
        settings.database_url(),
        sqlite_synchronous=settings.sqlite_synchronous,
        member_cache_members=settings.member_cache_members,
    )
    database.migrate()
    regions = Regions.from_settings(settings) if settings.regions else None
    engine = None
    if settings.run_engine:
        engine = build_engine(
            settings, database, regions_delete=regions.delete_copies if regions else None
        )
        engine.start()
    worker_settings = settings.model_copy(update={"run_engine": False})
    os.environ[WORKER_SETTINGS] = worker_settings.model_dump_json()
    os.environ[PARENT_ENGINE] = "running" if engine is not None else "off"
    try:
        uvicorn.run(
            "herd.api.server:worker_app",
            factory=True,
            workers=settings.api_workers,
            host=settings.host,
            port=settings.port,
            log_level="info",
            access_log=False,
            log_config=None,
            timeout_keep_alive=settings.api_keep_alive,
        )
    finally:
        if engine is not None:
            engine.stop()
        if regions is not None:
            regions.close()
        database.dispose()


def worker_app() -> FastAPI:
    """The app of one ``--workers`` process (uvicorn's factory): the API, no engine."""
    from herd.api.app import create_app
    from herd.observability import logs

    settings = Settings.model_validate_json(os.environ[WORKER_SETTINGS])
    logs.configure(settings.log_format)
    app = create_app(settings, start_engine=False)
    # /healthz of a worker reports the engine its parent runs for it (docs/api.md).
    app.state.herd.extra["parent_engine"] = os.environ.get(PARENT_ENGINE, "off")
    quiet_garbage_collector()
    return app
