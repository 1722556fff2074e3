"""Every route the app serves, read from the app itself (not listed by hand).

The access matrix and the fuzzing tests iterate these, so an endpoint added to the app is
covered (or fails for lack of a declared expectation) without anyone editing a list.
FastAPI >= 0.160 keeps the routes of an included router behind an ``_IncludedRouter``
whose ``effective_route_contexts()`` gives each route's final path and methods; older
versions flatten them into ``APIRoute`` objects. Both are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.routing import Mount

_CONVERTER = re.compile(r"\{(\w+):\w+\}")


@dataclass(frozen=True)
class RouteInfo:
    """One (method, path) the app answers; ``path`` is the template, converters dropped."""

    method: str
    path: str
    endpoint: str  # module.function, for messages
    in_schema: bool

    @property
    def params(self) -> list[str]:
        return re.findall(r"\{(\w+)\}", self.path)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class MountInfo:
    """A mounted sub-application (static files)."""

    path: str
    directory: Path | None


def _name(endpoint: Any) -> str:
    return f"{getattr(endpoint, '__module__', '?')}.{getattr(endpoint, '__name__', '?')}"


def _route_infos(route: Any) -> list[RouteInfo]:
    methods = sorted(set(getattr(route, "methods", None) or ()) - {"HEAD"})
    path = _CONVERTER.sub(r"{\1}", str(route.path))
    in_schema = bool(getattr(route, "include_in_schema", True))
    return [RouteInfo(m, path, _name(route.endpoint), in_schema) for m in methods]


def app_routes(app: FastAPI) -> tuple[list[RouteInfo], list[MountInfo]]:
    """The app's HTTP routes (HEAD left out: it follows GET) and its mounts."""
    routes: list[RouteInfo] = []
    mounts: list[MountInfo] = []
    for route in app.routes:
        if isinstance(route, Mount):
            directory = getattr(route.app, "directory", None)
            mounts.append(MountInfo(route.path, Path(directory) if directory else None))
        elif hasattr(route, "effective_route_contexts"):
            for context in route.effective_route_contexts():
                routes += _route_infos(context)
        elif hasattr(route, "methods"):
            routes += _route_infos(route)
        else:
            raise AssertionError(f"unknown kind of route: {route!r}")
    return sorted(set(routes), key=lambda r: (r.path, r.method)), mounts
