"""Request ids: taken from the caller or made up, echoed on every response, put in the logs.

A caller may send ``X-Request-Id`` (or OpenStack's ``x-openstack-request-id``,
which Senlin's clients know); a printable value of at most 128 characters is
kept, anything else is replaced by a new ``req-<uuid>``, as OpenStack services
make them. Both headers are echoed on every response, errors included, and the
id is in the log context (``request_id``) while the request is served.
"""

from __future__ import annotations

import random
import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herd.observability import context as log_context

HEADER = "X-Request-Id"
OPENSTACK_HEADER = "x-openstack-request-id"
_ACCEPTED = re.compile(r"^[\x21-\x7e]{1,128}$")
_NAMES = (HEADER.lower().encode(), OPENSTACK_HEADER.encode())


def new_request_id() -> str:
    # A request id names a request in logs, it guards nothing: the process's PRNG makes it
    # without uuid4's system call per request.
    return f"req-{uuid.UUID(int=random.getrandbits(128), version=4)}"


def request_id_of(headers: list[tuple[bytes, bytes]]) -> str:
    """The caller's id when it is acceptable, else a new one."""
    for wanted in _NAMES:
        for name, value in headers:
            if name.lower() == wanted:
                text = value.decode("latin-1").strip()
                if _ACCEPTED.match(text):
                    return text
    return new_request_id()


class RequestIdMiddleware:
    """Pure ASGI middleware: the outermost layer, so every answer carries the id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope.get("headers", []))
        scope.setdefault("state", {})["request_id"] = request_id
        echoed = [(name, request_id.encode("latin-1")) for name in _NAMES]

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() not in _NAMES
                ]
                message = {**message, "headers": headers + echoed}
            await send(message)

        # The context variable set and reset directly (what ``log_context.bound`` does,
        # without a generator-based context manager per request).
        token = log_context.request_id.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            log_context.request_id.reset(token)
