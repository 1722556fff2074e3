"""Microversion negotiation: ``OpenStack-API-Version: clustering X.Y``.

Without the header the API behaves as 1.0; ``latest`` means 1.14. Every
response echoes the version it was served at, with ``Vary``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herd.api.errors import error_response
from herd.errors import InvalidRequest

HEADER = "OpenStack-API-Version"
SERVICE = "clustering"
_FORMAT = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")


@dataclass(frozen=True, order=True)
class APIVersion:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, text: str) -> APIVersion:
        match = _FORMAT.match(text.strip())
        if match is None:
            raise ValueError(text)
        return cls(int(match.group(1)), int(match.group(2)))


MIN_VERSION = APIVersion(1, 0)
MAX_VERSION = APIVersion(1, 14)
DEFAULT_VERSION = MIN_VERSION


def _requested(value: str) -> str | None:
    """The clustering entry of a (possibly comma-separated) header value."""
    for entry in value.split(","):
        service, _, version = entry.strip().partition(" ")
        if service.lower() == SERVICE:
            return version.strip()
    return None


class VersionError(Exception):
    def __init__(self, status: int, message: str, error_type: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type


def negotiate(header_value: str | None) -> APIVersion:
    """The version to serve for a request header value; raises VersionError."""
    if header_value is None:
        return DEFAULT_VERSION
    requested = _requested(header_value)
    if requested is None or requested == "":
        return DEFAULT_VERSION
    if requested.lower() == "latest":
        return MAX_VERSION
    try:
        version = APIVersion.parse(requested)
    except ValueError:
        raise VersionError(
            400,
            f"API Version String '{requested}' is of invalid format. It must be of format "
            "'major.minor'.",
            "BadRequest",
        ) from None
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise VersionError(
            406,
            f"Version '{requested}' is not supported by the API. Minimum is '{MIN_VERSION}' "
            f"and maximum is '{MAX_VERSION}'.",
            "InvalidGlobalAPIVersion",
        )
    return version


_HEADER_NAME = HEADER.lower().encode("latin-1")


@functools.cache
def _echoed(version: APIVersion) -> tuple[tuple[bytes, bytes], ...]:
    # Made once per version (there are 15), not once per request.
    return ((_HEADER_NAME, f"{SERVICE} {version}".encode()), (b"vary", HEADER.encode()))


def _response_headers(version: APIVersion) -> list[tuple[bytes, bytes]]:
    return list(_echoed(version))


class MicroversionMiddleware:
    """Pure ASGI middleware (cheaper than BaseHTTPMiddleware on every request)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header_value: str | None = None
        for name, value in scope.get("headers", []):
            if name.lower() == _HEADER_NAME:
                header_value = value.decode("latin-1")
                break
        try:
            version = negotiate(header_value)
        except VersionError as exc:
            # Not served at the version asked for: the answer says which one it was (the
            # default, as without the header), so every response carries the header and Vary.
            response = error_response(exc.status, exc.message, exc.error_type)
            for name, value in _response_headers(DEFAULT_VERSION):
                response.headers[name.decode()] = value.decode()
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["api_version"] = version

        async def send_with_version(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                headers.extend(_response_headers(version))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_version)


def request_version(request: Request) -> APIVersion:
    version = getattr(request.state, "api_version", None)
    return version if isinstance(version, APIVersion) else DEFAULT_VERSION


def require(version: APIVersion, minimum: str) -> None:
    """Raise Senlin's 400 when a method is called below its minimum version."""
    if version < APIVersion.parse(minimum):
        raise InvalidRequest(f"API version '{version}' is not supported on this method.")
