"""``GET /healthz``: the API answers and the database does too."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from herd.api.deps import ServicesDep

router = APIRouter(tags=["health"])
log = logging.getLogger("herd.api")


@router.get("/healthz")
def healthz(services: ServicesDep) -> JSONResponse:
    try:
        with services.database.read() as session:
            session.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        log.warning("health check: database unavailable: %s", exc)
        return JSONResponse({"status": "error", "database": "unavailable"}, status_code=503)
    engine = "running" if services.engine is not None else "off"
    return JSONResponse({"status": "ok", "database": "ok", "engine": engine})
