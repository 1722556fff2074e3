"""Conditional GETs: an ``ETag`` on every JSON read under ``/v1``, and ``304`` when it matches.

A poller (the dashboard refreshes every few seconds) sends back the tag it was given in
``If-None-Match``; when the answer would be byte for byte the same it gets ``304 Not Modified``
and no body. The tag is a digest of the body itself, so it can never be stale whatever changed
the data (a member, a check record, a policy binding): a revision counter would have to be bumped
by every writer of every table a view reads. The read still runs; what is saved is the transfer
(an unchanged 10,000-member cluster page costs a few hundred bytes instead of megabytes).
herd's addition: Senlin sends no ETag (docs/api.md).
"""

from __future__ import annotations

import hashlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PREFIX = "/v1/"


def entity_tag(body: bytes) -> str:
    """A weak tag: equal bodies, equal tags (JSON is not promised byte-stable across versions)."""
    return f'W/"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'


def matches(if_none_match: str, tag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``tag`` (weak comparison, RFC 9110 13.1.2)."""
    wanted = tag.removeprefix("W/")
    for item in if_none_match.split(","):
        item = item.strip()
        if item == "*" or item.removeprefix("W/") == wanted:
            return True
    return False


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


class ConditionalGetMiddleware:
    """Pure ASGI middleware: buffers a ``GET /v1/...`` 200 JSON answer, tags it, may send 304."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or not str(scope.get("path", "")).startswith(PREFIX)
        ):
            await self.app(scope, receive, send)
            return
        if_none_match = _header(scope, b"if-none-match")
        start: Message | None = None
        chunks: list[bytes] = []
        passing = False

        async def buffered(message: Message) -> None:
            nonlocal start, passing
            if passing:
                await send(message)
                return
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                json_body = headers.get(b"content-type", b"").startswith(b"application/json")
                if message["status"] != 200 or not json_body:
                    passing = True
                    await send(message)
                    return
                start = dict(message)
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await _answer(start, b"".join(chunks), if_none_match, send)

        await self.app(scope, receive, buffered)


async def _answer(start: Message, body: bytes, if_none_match: str | None, send: Send) -> None:
    tag = entity_tag(body)
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    headers.append((b"etag", tag.encode("latin-1")))
    if if_none_match is not None and matches(if_none_match, tag):
        kept = [(k, v) for k, v in headers if k.lower() != b"content-type"]
        await send({**start, "status": 304, "headers": kept})
        await send({"type": "http.response.body", "body": b""})
        return
    headers.append((b"content-length", str(len(body)).encode("latin-1")))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": body})
