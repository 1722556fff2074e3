"""Policies: synchronous create, update and delete with an event; policy type details."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services import deletions
from herd.api.services.common import get_name, refuse_if_deleting, reject_unknown, unwrap
from herd.api.services.profiles import spec_map, sync_event
from herd.errors import InvalidSpec, NotFound, ResourceInUse
from herd.store.lookup import find
from herd.store.models import BindingRow, PolicyRow


def parse_policy_spec(services: Services, data: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    spec = data.get("spec")
    if spec is None:
        raise InvalidSpec("'spec' is a required property", field="spec")
    type_name, _policy = services.policies.create(spec)
    return type_name, spec_map(data)


def create_policy(
    session: Session, services: Services, ctx: RequestContext, body: Any
) -> PolicyRow:
    data = unwrap(body, "policy")
    reject_unknown(data, ("name", "spec"))
    name = get_name(data)
    type_name, spec = parse_policy_spec(services, data)
    now = services.now()
    row = PolicyRow(
        id=str(uuid.uuid4()),
        name=name,
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


def validate_policy(services: Services, ctx: RequestContext, body: Any) -> PolicyRow:
    data = unwrap(body, "policy")
    reject_unknown(data, ("spec",))
    type_name, spec = parse_policy_spec(services, data)
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
    session: Session, services: Services, ctx: RequestContext, identity: str, body: Any
) -> PolicyRow:
    data = unwrap(body, "policy")
    reject_unknown(data, ("name",))
    row = find(session, PolicyRow, identity, ctx.scope(), "policy")
    deletions.hide_from_agent(session, ctx, "policy", row)
    refuse_if_deleting(session, "policy", [row.id])
    if data.get("name") is not None:
        row.name = get_name(data)
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
            schema = getattr(cls, "schema_description", None)
            described = schema() if callable(schema) else {}
            return {**entry, "schema": described}
    raise NotFound("policy_type", name)
