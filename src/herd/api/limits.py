"""Request body limits: a body larger than ``max_request_body_bytes`` is a 413.

The limit holds while the body streams in: a declared ``Content-Length`` above it is
refused before a byte is read, and a chunked body is cut off at the first chunk past it,
so 100 MB are never read to find out they are too many. The answer is Senlin's error
body (``RequestLimitExceeded``). The middleware also hands the request the metadata
limits of the settings (api/input_guard.py reads them while it checks the body).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herd.api.errors import error_response
from herd.api.input_guard import METADATA_LIMITS, MetadataLimits
from herd.config import Settings

#: paths whose bodies may be larger than the setting, and how large
LARGER_BODIES = {"/v1/relocation-plans": 32 * 1024 * 1024}


class BodyTooLarge(Exception):
    """The body grew past the limit while the app was reading it."""


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.limit = settings.max_request_body_bytes
        self.metadata = MetadataLimits.from_settings(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = LARGER_BODIES.get(scope["path"], self.limit)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(limit, scope, receive, send)
            return
        received = 0
        exceeded = started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                # Whatever the app made of the cut-off body, the answer is the 413.
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await _refuse(limit, scope, receive, send)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        token = METADATA_LIMITS.set(self.metadata)
        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not exceeded or started:
                raise
            await _refuse(limit, scope, receive, send)
        finally:
            METADATA_LIMITS.reset(token)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(
        413,
        f"Request limit exceeded: the request body is larger than {limit} bytes "
        "(max_request_body_bytes).",
        "RequestLimitExceeded",
    )
    await response(scope, receive, send)
