"""Error classes to HTTP statuses, in one table, and Senlin's error body.

The table is looked up along the exception's MRO, so a subclass of a mapped
class gets its parent's status unless it has its own entry.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herd import errors
from herd.store import integrity
from herd.store.database import IntegrityError

log = logging.getLogger("herd.api")


STATUS_BY_ERROR: dict[type[BaseException], int] = {
    errors.InvalidRequest: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.VersionNotSupported: 406,
    errors.Conflict: 409,
    errors.PolicyRejected: 400,
    errors.DriverError: 500,
    errors.ServiceUnavailable: 503,
    errors.InternalError: 500,
    errors.HerdError: 500,
}

# webob's titles and explanations, which Senlin's FaultWrapper puts in its body.
TITLES: dict[int, tuple[str, str]] = {
    400: (
        "Bad Request",
        "The server could not comply with the request since it is either malformed "
        "or otherwise incorrect.",
    ),
    401: (
        "Unauthorized",
        "This server could not verify that you are authorized to access the document "
        "you requested.",
    ),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    406: (
        "Not Acceptable",
        "The resource could not be generated that was acceptable to your request.",
    ),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: (
        "Request Entity Too Large",
        "The body of your request was too large for this server.",
    ),
    415: ("Unsupported Media Type", "The request media type is not supported."),
    500: (
        "Internal Server Error",
        "The server has either erred or is incapable of performing the requested operation.",
    ),
    503: ("Service Unavailable", "The server is currently unavailable."),
}


def status_for(exc: BaseException) -> int:
    for klass in type(exc).__mro__:
        status = STATUS_BY_ERROR.get(klass)
        if status is not None:
            return status
    return 500


def error_body(status: int, message: str, error_type: str) -> dict[str, object]:
    title, explanation = TITLES.get(status, ("Error", ""))
    return {
        "code": status,
        "title": title,
        "explanation": explanation,
        "error": {"code": status, "message": message, "type": error_type},
    }


def error_response(
    status: int, message: str, error_type: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        error_body(status, message, error_type), status_code=status, headers=headers
    )


def _field_name(location: tuple[object, ...]) -> str:
    parts = [str(p) for p in location if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def validation_message(exc: RequestValidationError) -> str:
    messages = []
    for problem in exc.errors():
        kind = problem.get("type", "")
        if kind == "json_invalid":
            messages.append("The request body is not valid JSON.")
            continue
        field = _field_name(tuple(problem.get("loc", ())))
        messages.append(f"Invalid value for '{field}': {problem.get('msg', 'invalid')}.")
    return "\n".join(messages) or "The request is invalid."


async def _herd_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.HerdError)
    status = status_for(exc)
    request.state.error_type = exc.code  # the request metrics count 409s by type
    if status >= 500:
        log.error("request failed: %s: %s", exc.code, exc.message)
    headers = {"WWW-Authenticate": "Keystone uri=''"} if status == 401 else None
    return error_response(status, exc.message, exc.code, headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(400, validation_message(exc), "BadRequest")


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    title = TITLES.get(status, ("Error", ""))[0]
    message = str(exc.detail) if exc.detail else title
    if status == 404 and message == "Not Found":
        message = "The resource could not be found."
    headers = dict(exc.headers or {})
    if status == 405:
        # Starlette names the methods of the first route whose path matched; the path
        # may have several routes (GET, PATCH, DELETE), and Allow must name them all.
        headers["Allow"] = ", ".join(allowed_methods(request))
    return error_response(status, message, title.replace(" ", ""), headers)


def _route_methods(routes: Iterable[object]) -> Iterator[tuple[str, set[str]]]:
    for route in routes:
        # FastAPI >= 0.160 keeps an included router's routes behind one object.
        contexts = getattr(route, "effective_route_contexts", None)
        for item in contexts() if contexts is not None else (route,):
            path, methods = getattr(item, "path", None), getattr(item, "methods", None)
            if isinstance(path, str) and methods:
                yield path, set(methods)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app serves on this request's path."""
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for template, route_methods in _route_methods(request.app.routes):
        if compile_path(template)[0].match(path):
            methods.update(route_methods)
    if "GET" in methods:
        methods.add("HEAD")  # api/head.py answers HEAD wherever GET is served
    return sorted(methods)


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, f"Unexpected error: {type(exc).__name__}", "InternalError")


async def _integrity_error(request: Request, exc: Exception) -> JSONResponse:
    # A constraint caught what the request's own checks could not see (a concurrent
    # change); store/integrity.py says what, by the constraint's name.
    assert isinstance(exc, IntegrityError)
    error = integrity.as_error(exc)
    if status_for(error) >= 500:
        log.error("integrity error not foreseen by herd's checks: %s", exc)
    else:
        log.info("integrity error: %s", exc)
    return await _herd_error(request, error)


class UnexpectedErrorMiddleware:
    """Answer an unexpected exception with Senlin's 500 body, and keep the connection.

    Starlette hands ``Exception`` handlers to its outermost ServerErrorMiddleware, which
    sends the 500 and then raises the exception again, and uvicorn closes the connection
    of a request whose app raised after answering: every 500 reset the client's
    keep-alive connection. Caught here, inside the app, the 500 is an ordinary answer
    (and the request metrics and the request id see it like any other).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:
            if started:
                raise  # half an answer is out: only closing the connection can end it
            request = Request(scope)
            response = await _unexpected_error(request, exc)
            await response(scope, receive, send)


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.HerdError, _herd_error)
    app.add_exception_handler(IntegrityError, _integrity_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
