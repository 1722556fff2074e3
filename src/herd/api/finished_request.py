"""A pure ASGI middleware that hands each finished HTTP request to its hooks.

The metrics and the access log both need a request's status and duration once its answer
has gone out, whatever happened inside (an exception counts as the 500 it becomes); this is
that watching, written once, and done once per request for both: one layer, not one each
(issue 28: every layer wraps each message of every answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: ``hook(scope, status, seconds)``, called once the request's answer has gone out
FinishedHook = Callable[[Scope, int, float], None]

_log = logging.getLogger(__name__)


class FinishedRequestMiddleware:
    """Calls each hook, in order, after every HTTP request, with its status and seconds.

    A hook that raises is logged and the next ones still run: one watcher's failure (a
    metrics label, a log handler) must not cost the others their record of the request, nor
    turn an answer already sent into an error.
    """

    def __init__(self, app: ASGIApp, hooks: Sequence[FinishedHook]) -> None:
        self.app = app
        self.hooks = tuple(hooks)

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
            seconds = time.perf_counter() - started
            for hook in self.hooks:
                try:
                    hook(scope, status, seconds)
                except Exception:
                    _log.exception("finished-request hook %r failed", hook)
