"""``HEAD`` for every ``GET`` resource: run the GET and send its headers without the body.

FastAPI routes only the methods they declare; HTTP clients (keystoneauth's
``Adapter.head``, monitoring probes) expect HEAD wherever GET works.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGetMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b"", "more_body": message.get("more_body", False)}
            await send(message)

        inner = {**scope, "method": "GET"}
        try:
            await self.app(inner, receive, send_headers_only)
        finally:
            # The route that served it, for the metrics and the access log outside.
            if "route" in inner:
                scope["route"] = inner["route"]
