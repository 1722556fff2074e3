"""The dashboard at ``/ui``: a small build-free front end over the REST API.

The server only hands out static files (package data under ``static/``):
one HTML shell for every ``/ui/...`` path, ES modules and CSS, and the
vendored chart library. The pages read and act through the same ``/v1``
endpoints every client uses, with the same auth (a token kept in the browser's
``sessionStorage`` when ``auth: token``), so the dashboard adds no query of
its own and shows the API's own error texts. docs/dashboard.md has the pages.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"

#: the pages load nothing from elsewhere and run no inline script
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


def _shell() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=SECURITY_HEADERS)


@router.get("/ui")
async def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=308)


@router.get("/ui/")
async def ui_index() -> FileResponse:
    return _shell()


@router.get("/ui/{page:path}")
async def ui_page(page: str) -> FileResponse:
    """Every page is the same shell; the front end reads the path and draws the view."""
    del page
    return _shell()


def install_ui(app: FastAPI) -> None:
    """Serve the dashboard's static files and its pages."""
    # The mount comes first so /ui/static/... is never taken for a page.
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.include_router(router)
