"""Profiles: synchronous create, update and delete with an event."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import yaml
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.specs import ProfileCreate, ProfileUpdate, SpecValidate
from herd.api.services import deletions
from herd.api.services.common import refuse_if_deleting, reject_unknown
from herd.errors import InvalidSpec, ResourceInUse
from herd.store.events import record
from herd.store.lookup import find
from herd.store.models import ClusterRow, NodeRow, ProfileRow


def spec_map(spec: Any) -> dict[str, Any]:
    """The spec as a map (a YAML string is parsed); InvalidSpec when it is none."""
    if spec is None:
        raise InvalidSpec("'spec' is a required property", field="spec")
    if isinstance(spec, str | bytes):
        try:
            spec = yaml.safe_load(spec)
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
            raise InvalidSpec(f"Failed parsing the spec: {first}", field="spec") from None
    if not isinstance(spec, Mapping):
        raise InvalidSpec("The provided spec is not a map.", field="spec")
    return dict(spec)


def parse_profile_spec(services: Services, raw_spec: Any) -> tuple[str, dict[str, Any]]:
    """Validate a profile spec through the driver registry; return (type, spec)."""
    spec = spec_map(raw_spec)
    if spec.get("type") is None:
        raise InvalidSpec("The 'type' key is missing from the provided spec map.", field="type")
    if spec.get("version") is None:
        raise InvalidSpec(
            "The 'version' key is missing from the provided spec map.", field="version"
        )
    reject_unknown(spec, ("type", "version", "properties", "description"))
    properties = spec.get("properties", {})
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    type_name = services.drivers.full_name(str(spec["type"]), spec["version"])
    services.drivers.validate(str(spec["type"]), spec["version"], properties)
    return type_name, spec


def sync_event(
    session: Session, services: Services, ctx: RequestContext, kind: str, row: Any, what: str
) -> None:
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


def create_profile(
    session: Session, services: Services, ctx: RequestContext, request: ProfileCreate
) -> ProfileRow:
    type_name, spec = parse_profile_spec(services, request.spec)
    now = services.now()
    row = ProfileRow(
        id=str(uuid.uuid4()),
        name=request.name,
        type=type_name,
        spec=spec,
        meta_data=request.metadata or {},
        user=ctx.user,
        project=ctx.project,
        domain="",
        created_at=now,
        updated_at=None,
    )
    session.add(row)
    sync_event(session, services, ctx, "profile", row, "PROFILE_CREATE")
    return row


def validate_profile(services: Services, ctx: RequestContext, request: SpecValidate) -> ProfileRow:
    type_name, spec = parse_profile_spec(services, request.spec)
    return ProfileRow(
        id=None,
        name="validated_profile",
        type=type_name,
        spec=spec,
        meta_data={},
        user=ctx.user,
        project=ctx.project,
        domain="",
        created_at=services.now(),
        updated_at=None,
    )


def update_profile(
    session: Session, services: Services, ctx: RequestContext, identity: str, request: ProfileUpdate
) -> ProfileRow:
    row = find(session, ProfileRow, identity, ctx.scope(), "profile")
    deletions.hide_from_agent(session, ctx, "profile", row)
    refuse_if_deleting(session, "profile", [row.id])
    if request.name is not None:
        row.name = request.name
    if request.metadata is not None:
        row.meta_data = request.metadata
    if request.name is not None or request.metadata is not None:
        row.updated_at = services.now()
        sync_event(session, services, ctx, "profile", row, "PROFILE_UPDATE")
    return row


def delete_profile(
    session: Session, services: Services, ctx: RequestContext, identity: str
) -> None:
    row = find(session, ProfileRow, identity, ctx.scope(), "profile")
    used = session.scalar(
        select(
            exists().where(ClusterRow.profile_id == row.id)
            | exists().where(NodeRow.profile_id == row.id)
        )
    )
    in_use = (
        f"The profile '{row.id}' cannot be deleted: still referenced by some clusters and/or nodes."
    )
    if used:
        raise ResourceInUse(in_use)
    sync_event(session, services, ctx, "profile", row, "PROFILE_DELETE")
    deletions.delete_now(session, services, ctx, "profile", row, in_use)
