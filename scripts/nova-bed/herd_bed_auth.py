"""A paste filter for the Nova test bed: a token becomes Keystone's identity headers.

Nova 34 has no ``noauth2`` any more and the bed runs no Keystone, so the bed's api-paste.ini
puts this filter where ``authtoken`` was. Nova's ``keystonecontext`` filter after it builds the
request context from the headers set here, exactly as it does behind keystonemiddleware.

The token says who calls (nothing is verified: this is a test bed on 127.0.0.1):

* no token or ``admin``: user ``admin`` in project ``admin`` with roles admin, member, reader;
* ``USER:PROJECT``: that user in that project with roles member, reader;
* ``USER:PROJECT:ROLE,ROLE``: the roles given.

Whatever the client sent as identity headers is replaced, never trusted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

ADMIN = ("admin", "admin", "admin,member,reader")
IDENTITY_HEADERS = (
    "HTTP_X_IDENTITY_STATUS",
    "HTTP_X_USER_ID",
    "HTTP_X_USER_NAME",
    "HTTP_X_USER",
    "HTTP_X_PROJECT_ID",
    "HTTP_X_PROJECT_NAME",
    "HTTP_X_TENANT_ID",
    "HTTP_X_TENANT_NAME",
    "HTTP_X_TENANT",
    "HTTP_X_ROLES",
    "HTTP_X_ROLE",
    "HTTP_X_SERVICE_CATALOG",
)


def identity(token: str) -> tuple[str, str, str]:
    """(user, project, roles) for a token."""
    if not token or token == "admin":
        return ADMIN
    parts = token.split(":")
    user = parts[0] or "admin"
    project = parts[1] if len(parts) > 1 and parts[1] else user
    roles = parts[2] if len(parts) > 2 and parts[2] else "member,reader"
    return user, project, roles


def filter_factory(global_conf: dict[str, Any], **local_conf: Any) -> Callable[[Any], Any]:
    def wrap(app: Any) -> Any:
        def middleware(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            token = environ.get("HTTP_X_AUTH_TOKEN") or "admin"
            user, project, roles = identity(token)
            for header in IDENTITY_HEADERS:
                environ.pop(header, None)
            environ.update(
                HTTP_X_AUTH_TOKEN=token,
                HTTP_X_IDENTITY_STATUS="Confirmed",
                HTTP_X_USER_ID=user,
                HTTP_X_USER_NAME=user,
                HTTP_X_USER_DOMAIN_ID="default",
                HTTP_X_PROJECT_ID=project,
                HTTP_X_PROJECT_NAME=project,
                HTTP_X_PROJECT_DOMAIN_ID="default",
                HTTP_X_TENANT_ID=project,
                HTTP_X_ROLES=roles,
            )
            return app(environ, start_response)  # type: ignore[no-any-return]

        return middleware

    return wrap
