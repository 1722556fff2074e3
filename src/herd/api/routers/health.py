"""``GET /healthz``: the API answers and the database does too."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from herd.api.deps import ServicesDep

router = APIRouter(tags=["health"])
log = logging.getLogger("herd.api")


@router.get("/healthz")
def healthz(services: ServicesDep) -> JSONResponse:
    problem = services.database.ping()
    if problem is not None:
        log.warning("health check: database unavailable: %s", problem)
        return JSONResponse({"status": "error", "database": "unavailable"}, status_code=503)
    # A --workers process has no engine of its own; its parent runs the one engine.
    engine = services.extra.get("parent_engine", "off")
    if services.engine is not None:
        engine = "running"
    return JSONResponse({"status": "ok", "database": "ok", "engine": engine})
