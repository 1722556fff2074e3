"""Who is calling: user, project and roles.

``auth: none`` makes every caller the admin of ``settings.default_project``.
``auth: keystone`` asks Keystone who a token belongs to (``api/keystone.py``) and checks
the route's policy rule (``api/policy.py``); the token's project, user, roles and domain
make the context.
``auth: token`` looks ``X-Auth-Token`` up by its SHA-256 in the ``tokens``
table. Members see only their project (other projects' resources are 404);
admins see every resource by id and every project's resources in lists with
``global_project=true``; ``agent`` is the regional agents' credential: it may
only read (list globally, too) the resources agents reconcile, through the
endpoints that take :data:`ReaderContext`, and only in the regions its token carries
(``regions``: nodes placed elsewhere, and clusters with no member there, are 404; see
``api/services/agent_regions.py``). Every other endpoint takes
:data:`Context`, which refuses agents with 403, so a new endpoint is closed to
agent tokens unless it says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, TypeVar, cast

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from herd.api.deps import Services, ServicesDep
from herd.api.microversion import APIVersion, request_version
from herd.errors import Forbidden, Unauthorized
from herd.store import tokens
from herd.store.lookup import Scope
from herd.types import Role

if TYPE_CHECKING:
    from herd.api.keystone import KeystoneAuth

TOKEN_HEADER = "X-Auth-Token"
AGENT_REFUSED = (
    "An agent token may only read clusters, nodes, profiles and policies; "
    "this operation needs a member's or an admin's token."
)


@dataclass(frozen=True)
class KeystoneCaller:
    """What a Keystone caller brought: its token and its roles as Keystone named them.

    Kept for making a trust (``api/trusts.py``); never shown, logged or stored."""

    token: str = field(repr=False)
    roles: tuple[str, ...]


@dataclass(frozen=True)
class RequestContext:
    user: str
    project: str
    roles: tuple[str, ...]
    version: APIVersion
    #: the project's domain (``auth: keystone``)
    domain: str | None = None
    #: the regions an agent token may read; None: every region (every other caller)
    regions: tuple[str, ...] | None = None
    #: ``auth: keystone``: the caller's token and Keystone roles (for trusts)
    keystone: KeystoneCaller | None = field(default=None, repr=False, compare=False)

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN.value in self.roles

    @property
    def is_agent(self) -> bool:
        return Role.AGENT.value in self.roles

    def scope(self) -> Scope:
        """Scope for finding one resource: admins see every project (as Senlin)."""
        return Scope(self.project, all_projects=self.is_admin)

    def own_scope(self) -> Scope:
        """Scope limited to the caller's project, for references inside a request body."""
        return Scope(self.project, all_projects=False)

    def list_scope(self, global_project: bool) -> Scope:
        if not global_project:
            return Scope(self.project)
        if not (self.is_admin or self.is_agent):
            raise Forbidden("You are not authorized to complete this operation.")
        return Scope(self.project, all_projects=True)


async def _caller(request: Request, services: Services) -> RequestContext:
    version = request_version(request)
    settings = services.settings
    if settings.auth == "none":
        return RequestContext("admin", settings.default_project, (Role.ADMIN.value,), version)
    secret = request.headers.get(TOKEN_HEADER)
    if not secret:
        raise Unauthorized("Authentication required: send a token in X-Auth-Token.")
    if settings.auth == "keystone":
        return await _keystone_context(request, services, secret, version)
    return await run_in_threadpool(_token_context, services, secret, version)


async def _keystone_context(
    request: Request, services: Services, secret: str, version: APIVersion
) -> RequestContext:
    keystone: KeystoneAuth = services.extra["keystone"]
    identity = await run_in_threadpool(keystone.tokens.identify, secret)
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    roles = keystone.roles(identity, request.method, path)
    return RequestContext(
        identity.user,
        identity.project,
        roles,
        version,
        identity.domain,
        keystone=KeystoneCaller(secret, identity.roles),
    )


async def get_context(request: Request, services: ServicesDep) -> RequestContext:
    """The caller of a user operation: admin of the default project (``auth: none``) or a
    member's or admin's token. Agent tokens are refused (403).

    Async so that FastAPI does not hop to its thread pool for it on every request; only
    the token lookup, which reads the database, runs in the pool.
    """
    ctx = await _caller(request, services)
    if ctx.is_agent:
        raise Forbidden(AGENT_REFUSED)
    return ctx


async def get_reader_context(request: Request, services: ServicesDep) -> RequestContext:
    """The caller of a read that regional agents make too (clusters, nodes, profiles, policies)."""
    return await _caller(request, services)


async def reader_context(request: Request) -> RequestContext:
    """:func:`get_reader_context` for a handler that resolves its own context.

    The hot read endpoints take only the request: FastAPI's dependency solving for a
    services and a context parameter cost more than the read itself.
    """
    return await _caller(request, request.app.state.herd)


async def user_context(request: Request) -> RequestContext:
    """:func:`get_context` for a handler that resolves its own context (see above)."""
    ctx = await _caller(request, request.app.state.herd)
    if ctx.is_agent:
        raise Forbidden(AGENT_REFUSED)
    return ctx


def _token_context(services: Services, secret: str, version: APIVersion) -> RequestContext:
    with services.database.read() as session:
        row = tokens.lookup(session, secret, services.now())
        if row is None:
            raise Unauthorized("The request you have made requires authentication.")
        regions = tuple(row.regions) if row.regions is not None else None
        return RequestContext(row.id, row.project, (row.role,), version, regions=regions)


#: what an agent token never reads: tenants' specs (where credentials live, e.g. a
#: process's ``env``), metadata, config and data. Reconciling needs ids, names and projects.
View = TypeVar("View", bound=Mapping[str, object])

AGENT_HIDDEN = frozenset(("spec", "metadata", "config", "data", "details", "dependents"))


def for_caller(ctx: RequestContext, view: View) -> View:
    """``view`` as the caller may read it: without :data:`AGENT_HIDDEN` for an agent.

    The views' types (``herd.api.view_models``) declare those keys ``NotRequired``.
    """
    if not ctx.is_agent:
        return view
    return cast(View, {key: value for key, value in view.items() if key not in AGENT_HIDDEN})


Context = Annotated[RequestContext, Depends(get_context)]
ReaderContext = Annotated[RequestContext, Depends(get_reader_context)]
