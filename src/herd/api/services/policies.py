"""Policies: how their specs are validated, what sets them apart from profiles, policy types."""

from __future__ import annotations

from collections.abc import Mapping

from herd.api.deps import Services
from herd.api.schemas.specs import PolicyCreate, PolicyUpdate
from herd.api.services.profiles import spec_map
from herd.api.services.spec_resources import SpecKind
from herd.engine.outbound import OutboundGuard, check_urls
from herd.errors import InvalidSpec, NotFound
from herd.policies.spec import describe_schema
from herd.store.models import PolicyRow
from herd.store.spec_rows import policy_in_use
from herd.types import ResourceType


def parse_policy_spec(services: Services, raw_spec: object) -> tuple[str, dict[str, object]]:
    """Validate a policy spec through the policy registry; return (type, spec)."""
    if raw_spec is None:
        raise InvalidSpec("'spec' is a required property", field="spec")
    if not isinstance(raw_spec, Mapping | str | bytes):
        # what the registry's own first check answers (policies/spec.py), said here
        # because only these three kinds of value are a spec to hand it
        raise InvalidSpec("The provided spec is not a map.", field="spec")
    type_name, policy = services.policies.create(raw_spec)
    # The URLs herd will call for the tenant: refused now (400 naming the field) rather
    # than on the first call (the guard checks them again then; engine/outbound.py).
    check_urls(OutboundGuard.from_settings(services.settings), policy.outbound_urls())
    return type_name, spec_map(raw_spec)


def _updated_columns(request: PolicyUpdate) -> dict[str, object]:
    return {"name": request.name} if request.name is not None else {}


POLICIES: SpecKind[PolicyRow] = SpecKind(
    kind=ResourceType.POLICY,
    plural="policies",
    model=PolicyRow,
    create_request=PolicyCreate,
    update_request=PolicyUpdate,
    parse_spec=parse_policy_spec,
    own_columns=lambda _request: {"data": {}},
    updated_columns=_updated_columns,
    in_use=policy_in_use,
    in_use_message="The policy '{id}' cannot be deleted: still attached to some clusters.",
)


def policy_type_detail(services: Services, name: str) -> dict[str, object]:
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
