"""Run the API (and, per settings, the engine) under uvicorn."""

from __future__ import annotations

import ipaddress
import socket

from herd.config import Settings
from herd.errors import InvalidRequest


def is_loopback(host: str) -> bool:
    """True when ``host`` only listens on the local machine."""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )


def check_auth(settings: Settings) -> None:
    """Refuse ``auth: none`` on a non-loopback address.

    Raises:
        InvalidRequest: the settings would expose an unauthenticated API.
    """
    if settings.auth == "none" and not is_loopback(settings.host):
        raise InvalidRequest(
            f"Refusing to serve with auth 'none' on {settings.host}: without tokens every "
            "caller is an administrator. Listen on 127.0.0.1, or use --auth token "
            "(HERD_AUTH=token) and create tokens with 'herd token create'.",
            field="auth",
        )


def serve(settings: Settings) -> None:
    """Serve the API on ``settings.host:settings.port`` until interrupted."""
    import uvicorn

    from herd.api.app import create_app
    from herd.observability import logs

    logs.configure(settings.log_format)
    check_auth(settings)
    app = create_app(settings)
    # log_config=None: uvicorn keeps the handlers configured above instead of its own.
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        access_log=False,
        log_config=None,
    )
