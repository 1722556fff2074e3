"""``/v1/profile-types`` and ``/v1/policy-types``."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter

from herd.api.auth import Context, RequestContext
from herd.api.deps import ServicesDep
from herd.api.microversion import APIVersion
from herd.api.services.policies import policy_type_detail
from herd.errors import InvalidSpec, NotFound

router = APIRouter(prefix="/v1", tags=["types"])

V1_5 = APIVersion(1, 5)


def _summary(entry: Mapping[str, object], ctx: RequestContext) -> dict[str, object]:
    # Before 1.5 Senlin lists only the names.
    if ctx.version < V1_5:
        return {"name": entry["name"]}
    # From 1.5 on Senlin names the type without its version, which has its own key
    # (``senlin.policy.deletion`` and ``1.1``), one entry per version.
    version = entry.get("version")
    name = str(entry["name"])
    if version is not None and name.endswith(f"-{version}"):
        name = name[: -len(f"-{version}")]
    return {
        "name": name,
        "version": version,
        "support_status": entry.get("support_status", {}),
    }


@router.get("/profile-types")
def list_profile_types(services: ServicesDep, ctx: Context) -> dict[str, object]:
    return {"profile_types": [_summary(e, ctx) for e in services.drivers.types()]}


def _profile_type(services: ServicesDep, name: str) -> dict[str, object]:
    try:
        return services.drivers.describe(services.drivers.full_name(name))
    except InvalidSpec:
        raise NotFound("profile_type", name) from None


@router.get("/profile-types/{type_name}")
def get_profile_type(type_name: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    entry = _profile_type(services, type_name)
    body = {"name": entry["name"], "schema": entry.get("schema", {})}
    if ctx.version >= V1_5:
        body["support_status"] = entry.get("support_status", {})
    return {"profile_type": body}


@router.get("/profile-types/{type_name}/ops")
def get_profile_type_ops(type_name: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    entry = _profile_type(services, type_name)
    return {"operations": entry.get("operations", {})}


@router.get("/policy-types")
def list_policy_types(services: ServicesDep, ctx: Context) -> dict[str, object]:
    return {"policy_types": [_summary(e, ctx) for e in services.policies.types()]}


@router.get("/policy-types/{type_name}")
def get_policy_type(type_name: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    entry = policy_type_detail(services, type_name)
    body = {"name": entry["name"], "schema": entry.get("schema", {})}
    if ctx.version >= V1_5:
        body["support_status"] = entry.get("support_status", {})
    return {"policy_type": body}
