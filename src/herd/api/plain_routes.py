"""Hot endpoints served by a plain Starlette route, in front of FastAPI's routing.

FastAPI's per-request work (walking the included routers, solving the app-wide and the
route's dependencies, its telemetry hooks) cost a mark-unhealthy about a tenth of the event
loop's time (issue 28, docs/benchmarks.md). A :class:`PlainRoute` serves one method of one
path template before FastAPI's routes are tried; the FastAPI route of the same path and
method stays registered, so ``/openapi.json`` still documents it, but it is never reached.

What the plain route must do as FastAPI did, it does here with the same exceptions, so the
same handlers (``herd.api.errors``) answer them with the same statuses and texts:

* the body is read as FastAPI reads an ``object = Body(None)`` parameter (:func:`json_body`);
* the app-wide parameter check (``input_guard.check_parameters``) runs after the body is
  read, as FastAPI runs the app's dependencies after reading the body.

Every middleware still wraps it (request id, access log, metrics, microversion, limits,
errors): it is one of the router's routes, only tried first. ``scope["route"]`` is the
route, whose ``path`` is the template, as the access log, the metrics and Keystone's policy
rules read it.
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Scope

from herd.api import input_guard

Endpoint = Callable[[Request], Awaitable[Response]]


class PlainRoute(Route):
    """One method of one path, served without FastAPI's routing and dependency solving.

    Any other method is no match at all (not a partial one), so the FastAPI routes of the
    same path answer it exactly as they did before this route existed.
    """

    def __init__(self, path: str, endpoint: Endpoint, method: str) -> None:
        super().__init__(path, endpoint, methods=[method], include_in_schema=False)
        self.method = method

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["method"] != self.method:
            return Match.NONE, {}
        match, child_scope = super().matches(scope)
        if match is Match.FULL:
            child_scope["route"] = self  # what FastAPI's routes set: the template's owner
        return match, child_scope


def install(app: FastAPI, routes: list[PlainRoute]) -> None:
    """Put ``routes`` in front of every route of ``app``."""
    app.router.routes[:0] = routes


async def checked_parameters(request: Request) -> None:
    """The app-wide dependency FastAPI would have solved (``input_guard``)."""
    await input_guard.check_parameters(request)


async def json_body(request: Request) -> object:
    """The body as FastAPI gives an ``object = Body(None)`` parameter, with its errors.

    No body is None; a JSON media type (or none: herd's app is not strict about it) is
    decoded; any other media type is the raw bytes. Undecodable JSON is FastAPI's
    ``RequestValidationError`` (``json_invalid``), any other failure its 400
    ``There was an error parsing the body``.
    """
    try:
        body = await request.body()
        if not body:
            return None
        content_type = request.headers.get("content-type")
        if not content_type or content_type == "application/json" or _json_type(content_type):
            return await request.json()
        return body
    except json.JSONDecodeError as exc:
        raise RequestValidationError(
            [
                {
                    "type": "json_invalid",
                    "loc": ("body", exc.pos),
                    "msg": "JSON decode error",
                    "input": {},
                    "ctx": {"error": exc.msg},
                }
            ],
            body=exc.doc,
        ) from exc
    except HTTPException:
        raise
    except Exception as exc:
        raise HTTPException(status_code=400, detail="There was an error parsing the body") from exc


def _json_type(content_type: str) -> bool:
    # FastAPI's test: an application/json or application/*+json media type, parameters aside.
    message = email.message.Message()
    message["content-type"] = content_type
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")
