"""Profiles and policies alike: resources made from a validated spec, changed only in name
(and a profile's metadata), deleted synchronously when nothing refers to them.

A :class:`SpecKind` says what differs between the two (how a spec is validated, the
kind's own columns, what counts as a reference); the functions here do the rest,
so the two endpoints cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.base import RequestModel
from herd.api.schemas.specs import SpecValidate
from herd.api.services import deletions
from herd.api.services.common import refuse_if_deleting
from herd.errors import InvalidRequest, ResourceInUse
from herd.store import spec_rows
from herd.store.database import Session
from herd.store.events import record
from herd.store.listing import Query, select_rows
from herd.store.lookup import find
from herd.store.models import PolicyRow, ProfileRow, ReceiverRow
from herd.store.spec_rows import SpecRow, new_spec_row
from herd.types import ResourceType


class CreateRequest(Protocol):
    """What a create request of either kind carries (ProfileCreate, PolicyCreate)."""

    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> object: ...


@dataclass(frozen=True)
class SpecKind(Generic[SpecRow]):
    """What makes profiles and policies different from each other."""

    kind: ResourceType
    plural: str
    model: type[SpecRow]
    create_request: type[RequestModel]
    update_request: type[RequestModel]
    #: validate a raw spec; return (type name, spec map)
    parse_spec: Callable[[Services, object], tuple[str, dict[str, object]]]
    #: the kind's own columns of a new row, from its create request (None: a validation)
    own_columns: Callable[[Any | None], dict[str, Any]]
    #: the columns an update request changes (only those it gives)
    updated_columns: Callable[[Any], dict[str, Any]]
    in_use: Callable[[Session, str], bool]
    #: the 409 text when something still refers to it ({id} is its id)
    in_use_message: str
    #: an update that gives nothing is Senlin's 400 "No property needs an update." (its
    #: profile update said so; its policy update answered the policy unchanged)
    refuse_empty_update: bool = False


def sync_event(
    session: Session,
    services: Services,
    ctx: RequestContext,
    kind: str,
    row: ProfileRow | PolicyRow | ReceiverRow,
    what: str,
) -> None:
    """The event of a change made in the request itself (no action): e.g. PROFILE_CREATE."""
    record(
        session,
        otype=kind.upper(),
        oid=row.id,
        oname=row.name,
        project=row.project,
        user=ctx.user,
        action=what,
        status="SUCCEEDED",
        reason=f"{kind.capitalize()} {what.split('_')[-1].lower()}d.",
        now=services.now(),
    )


def list_query(spec: SpecKind[SpecRow], ctx: RequestContext) -> Query:
    return select_rows(spec.model, *deletions.agent_filter(ctx, spec.kind))


def create(
    session: Session,
    services: Services,
    ctx: RequestContext,
    spec: SpecKind[SpecRow],
    request: CreateRequest,
    parsed: tuple[str, dict[str, object]] | None = None,
) -> SpecRow:
    """Store a new profile or policy; ``parsed`` is its spec already validated (the router
    validates before it opens the transaction: a profile's check may ask a cloud)."""
    type_name, spec_map = parsed or spec.parse_spec(services, request.spec)
    row = new_spec_row(
        spec.model,
        stored=True,
        name=request.name,
        type_name=type_name,
        spec=spec_map,
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=services.now(),
        **spec.own_columns(request),
    )
    spec_rows.add(session, row)
    sync_event(session, services, ctx, spec.kind, row, f"{spec.kind.upper()}_CREATE")
    return row


def validate(
    services: Services, ctx: RequestContext, spec: SpecKind[SpecRow], request: SpecValidate
) -> SpecRow:
    """The row a create would store, not stored (Senlin's ``validated_<kind>``)."""
    type_name, spec_map = spec.parse_spec(services, request.spec)
    return new_spec_row(
        spec.model,
        stored=False,
        name=f"validated_{spec.kind}",
        type_name=type_name,
        spec=spec_map,
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=services.now(),
        **spec.own_columns(None),
    )


def find_visible(
    session: Session, ctx: RequestContext, spec: SpecKind[SpecRow], identity: str
) -> SpecRow:
    row: SpecRow = find(session, spec.model, identity, ctx.scope(), spec.kind)
    deletions.hide_from_agent(session, ctx, spec.kind, row)
    return row


def update(
    session: Session,
    services: Services,
    ctx: RequestContext,
    spec: SpecKind[SpecRow],
    identity: str,
    request: object,
) -> SpecRow:
    row = find_visible(session, ctx, spec, identity)
    refuse_if_deleting(session, spec.kind, [row.id])
    changes = spec.updated_columns(request)
    if not changes and spec.refuse_empty_update:
        raise InvalidRequest("No property needs an update.")
    if changes:
        for column, value in changes.items():
            setattr(row, column, value)
        row.updated_at = services.now()
        sync_event(session, services, ctx, spec.kind, row, f"{spec.kind.upper()}_UPDATE")
    return row


def delete(
    session: Session,
    services: Services,
    ctx: RequestContext,
    spec: SpecKind[SpecRow],
    identity: str,
) -> None:
    row = find(session, spec.model, identity, ctx.scope(), spec.kind)
    in_use = spec.in_use_message.format(id=row.id)
    if spec.in_use(session, row.id):
        raise ResourceInUse(in_use)
    sync_event(session, services, ctx, spec.kind, row, f"{spec.kind.upper()}_DELETE")
    deletions.delete_now(session, services, ctx, spec.kind, row, in_use)
