"""Keystone tokens for ``auth: keystone``: keystonemiddleware's ``auth_token`` validates them.

``auth_token`` is WSGI middleware; herd is ASGI. So :class:`KeystoneTokens` keeps one
``AuthProtocol`` around a do-nothing WSGI app and hands it, for each token, a minimal WSGI
request carrying only ``X-Auth-Token``: nothing the caller sent besides the token reaches
it, so a caller cannot forge the ``X-Roles``/``X-Project-Id`` headers the middleware
sets. The middleware does the rest as it does for Nova or Senlin: it asks Keystone with
herd's service credentials (``settings.keystone_*``) and caches each answer in the
process for ``keystone_token_cache_time`` seconds (its in-memory cache, as no memcached
is configured). ``delay_auth_decision`` makes it say "Invalid" instead of answering a
401 itself, so herd answers with Senlin's error body.

Its configuration lives in a private ``oslo.config`` object: herd's settings are the
only source (no ``/etc`` file is read, the global ``cfg.CONF`` is left alone).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herd.config import Settings
from herd.errors import ServiceUnavailable, Unauthorized

if TYPE_CHECKING:
    from oslo_config.cfg import ConfigOpts

GROUP = "keystone_authtoken"
UNAUTHORIZED = "The request you have made requires authentication."


@dataclass(frozen=True)
class Identity:
    """Who a valid token belongs to, as Keystone says."""

    user: str
    project: str
    roles: tuple[str, ...]
    #: the project's domain
    domain: str | None = None
    user_name: str | None = None
    project_name: str | None = None


def _config(settings: Settings) -> ConfigOpts:
    from keystoneauth1 import loading
    from oslo_config import cfg

    conf = cfg.ConfigOpts()
    conf([], project="herd", default_config_files=[], default_config_dirs=[])
    loading.register_auth_conf_options(conf, GROUP)
    conf.register_opts(loading.get_auth_plugin_conf_options("password"), group=GROUP)
    password = settings.keystone_password
    values = {
        "auth_type": "password",
        "auth_url": settings.keystone_auth_url,
        "username": settings.keystone_username,
        "password": password.get_secret_value() if password is not None else None,
        "project_name": settings.keystone_project_name,
        "user_domain_name": settings.keystone_user_domain_name,
        "project_domain_name": settings.keystone_project_domain_name,
    }
    for name, value in values.items():
        conf.set_override(name, value, group=GROUP)
    return conf


class KeystoneTokens:
    """Validates Keystone tokens (blocking: call it from a thread)."""

    def __init__(self, settings: Settings) -> None:
        # Settings refused auth 'keystone' without its URL and password (config.py).
        from keystonemiddleware import auth_token

        options: dict[str, object] = {
            "oslo_config_config": _config(settings),
            "delay_auth_decision": True,
            "www_authenticate_uri": settings.keystone_auth_url,
            "token_cache_time": settings.keystone_token_cache_time,
            "include_service_catalog": False,
            "service_token_roles_required": True,
        }
        if settings.keystone_region_name:
            options["region_name"] = settings.keystone_region_name
        self._protocol = auth_token.AuthProtocol(_accept, options)

    def identify(self, token: str) -> Identity:
        """The identity behind ``token``.

        Raises:
            Unauthorized: Keystone does not know the token, it expired, or it is not scoped
                to a project.
            ServiceUnavailable: Keystone could not be asked.
        """
        environ = _environ(token)
        statuses: list[str] = []
        self._protocol(environ, lambda status, headers, exc_info=None: statuses.append(status))
        status = environ.get("HTTP_X_IDENTITY_STATUS")
        if status is None:
            # the middleware answered itself: Keystone (or herd's own login) failed
            raise ServiceUnavailable(
                f"Keystone could not validate the token ({', '.join(statuses) or 'no answer'})."
            )
        if status != "Confirmed":
            raise Unauthorized(UNAUTHORIZED)
        project = environ.get("HTTP_X_PROJECT_ID")
        if not project:
            raise Unauthorized("A token scoped to a project is required.")
        roles = tuple(r for r in environ.get("HTTP_X_ROLES", "").split(",") if r)
        return Identity(
            user=environ["HTTP_X_USER_ID"],
            project=project,
            roles=roles,
            domain=environ.get("HTTP_X_PROJECT_DOMAIN_ID"),
            user_name=environ.get("HTTP_X_USER_NAME"),
            project_name=environ.get("HTTP_X_PROJECT_NAME"),
        )


class KeystoneAuth:
    """``auth: keystone``: the token validator and the policy rules, built once per app."""

    def __init__(self, settings: Settings, routes: Iterable[tuple[str, str]]) -> None:
        from herd.api.policy import PolicyEnforcer

        self.tokens = KeystoneTokens(settings)
        self.policy = PolicyEnforcer(routes, settings.policy_file)

    def roles(self, identity: Identity, method: str, path: str) -> tuple[str, ...]:
        """The caller's roles for herd, once the route's rule allowed the call.

        ``admin`` is among them exactly when ``context_is_admin`` says so (as in Senlin,
        where the rule, not the role's name, made an admin), whatever Keystone called it.

        Raises:
            Forbidden: the route's rule refuses the caller.
        """
        from herd.api.policy import rule_name

        credentials: dict[str, object] = {
            "roles": list(identity.roles),
            "user_id": identity.user,
            "project_id": identity.project,
            "project_domain_id": identity.domain,
        }
        self.policy.authorize(rule_name(method, path), credentials)
        others = tuple(r for r in identity.roles if r != "admin")
        if self.policy.allowed("context_is_admin", credentials):
            return ("admin", *others)
        return others


def route_templates(routes: Iterable[Any]) -> list[tuple[str, str]]:
    """Every (method, path template) of an app's routes, for the policy rules.

    FastAPI >= 0.160 keeps an included router's routes behind one ``_IncludedRouter``
    whose ``effective_route_contexts()`` gives their final paths; older versions list
    them one by one.
    """
    found: list[tuple[str, str]] = []
    for route in routes:
        if hasattr(route, "effective_route_contexts"):
            found += route_templates(route.effective_route_contexts())
        elif getattr(route, "methods", None):
            found += [(method, str(route.path)) for method in route.methods]
    return found


def _environ(token: str) -> dict[str, Any]:
    """A WSGI request with nothing in it but the token."""
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/",
        "QUERY_STRING": "",
        "SERVER_NAME": "herd",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": io.StringIO(),
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "HTTP_X_AUTH_TOKEN": token,
    }


def _accept(environ: dict[str, object], start_response: Callable[..., object]) -> list[bytes]:
    """The app behind the middleware: the identity headers are read from ``environ``."""
    start_response("204 No Content", [])
    return []
