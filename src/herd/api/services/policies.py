"""Policies: synchronous create, update and delete with an event; policy type details."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.specs import PolicyCreate, PolicyUpdate, SpecValidate
from herd.api.services import deletions
from herd.api.services.common import refuse_if_deleting
from herd.api.services.profiles import spec_map, sync_event
from herd.errors import InvalidSpec, NotFound, ResourceInUse
from herd.policies.spec import describe_schema
from herd.store.lookup import find
from herd.store.models import BindingRow, PolicyRow


def parse_policy_spec(services: Services, raw_spec: Any) -> tuple[str, dict[str, Any]]:
    """Validate a policy spec through the policy registry; return (type, spec)."""
    if raw_spec is None:
        raise InvalidSpec("'spec' is a required property", field="spec")
    type_name, _policy = services.policies.create(raw_spec)
    return type_name, spec_map(raw_spec)


def create_policy(
    session: Session, services: Services, ctx: RequestContext, request: PolicyCreate
) -> PolicyRow:
    type_name, spec = parse_policy_spec(services, request.spec)
    now = services.now()
    row = PolicyRow(
        id=str(uuid.uuid4()),
        name=request.name,
        type=type_name,
        spec=spec,
        data={},
        user=ctx.user,
        project=ctx.project,
        domain="",
        created_at=now,
        updated_at=None,
    )
    session.add(row)
    sync_event(session, services, ctx, "policy", row, "POLICY_CREATE")
    return row


def validate_policy(services: Services, ctx: RequestContext, request: SpecValidate) -> PolicyRow:
    type_name, spec = parse_policy_spec(services, request.spec)
    return PolicyRow(
        id=None,
        name="validated_policy",
        type=type_name,
        spec=spec,
        data={},
        user=ctx.user,
        project=ctx.project,
        domain="",
        created_at=services.now(),
        updated_at=None,
    )


def update_policy(
    session: Session, services: Services, ctx: RequestContext, identity: str, request: PolicyUpdate
) -> PolicyRow:
    row = find(session, PolicyRow, identity, ctx.scope(), "policy")
    deletions.hide_from_agent(session, ctx, "policy", row)
    refuse_if_deleting(session, "policy", [row.id])
    if request.name is not None:
        row.name = request.name
        row.updated_at = services.now()
        sync_event(session, services, ctx, "policy", row, "POLICY_UPDATE")
    return row


def delete_policy(session: Session, services: Services, ctx: RequestContext, identity: str) -> None:
    row = find(session, PolicyRow, identity, ctx.scope(), "policy")
    in_use = f"The policy '{row.id}' cannot be deleted: still attached to some clusters."
    if session.scalar(select(exists().where(BindingRow.policy_id == row.id))):
        raise ResourceInUse(in_use)
    sync_event(session, services, ctx, "policy", row, "POLICY_DELETE")
    deletions.delete_now(session, services, ctx, "policy", row, in_use)


def policy_type_detail(services: Services, name: str) -> dict[str, Any]:
    for entry in services.policies.types():
        if entry.get("name") == name:
            try:
                cls = services.policies.resolve_full(name)
            except InvalidSpec:
                cls = None
            schema = getattr(cls, "schema", None)
            described = describe_schema(schema) if isinstance(schema, Mapping) else {}
            return {**entry, "schema": described}
    raise NotFound("policy_type", name)
