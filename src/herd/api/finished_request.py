"""A pure ASGI middleware that hands each finished HTTP request to one hook.

The metrics and the access log both need a request's status and duration once its answer
has gone out, whatever happened inside (an exception counts as the 500 it becomes); this is
that watching, written once.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class FinishedRequestMiddleware:
    """Calls :meth:`finished` after every HTTP request, with its status and seconds."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_watch)
        finally:
            self.finished(scope, status, time.perf_counter() - started)

    def finished(self, scope: Scope, status: int, seconds: float) -> None:
        raise NotImplementedError
