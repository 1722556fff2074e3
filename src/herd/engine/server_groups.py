"""The affinity policy's I/O: its server group found or made at attach, deleted at detach.

Senlin's ``senlin.policy.affinity`` did this inside the policy; in herd the policy
only decides (:mod:`herd.policies.affinity`) and this module calls the cluster's
driver. What an attach found or made is the binding's data,
``{"servergroup_id": id, "inherited_group": bool}``: a group found by name is
inherited and outlives the binding; a group the attach made is deleted with it
(detach, or the cluster's deletion).

Both steps of an attach are stored as the action's steps (``ActionExecution.once``),
and a group herd makes is named before it is made (``server_group_<action id>``
unless the spec or the profile names one): an attach resumed after its engine died
finds the group its first run made instead of making a second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

from herd.engine.execution import ActionExecution
from herd.errors import HerdError
from herd.policies.affinity import AffinityPolicy
from herd.store import bindings, policies, profiles


def profile_of(ex: ActionExecution, cluster_profile_id: str) -> tuple[str, dict[str, object]] | str:
    """The cluster profile's type and validated properties, or why they cannot be had."""
    with ex.ctx.database.read() as session:
        profile = profiles.get(session, cluster_profile_id)
        if profile is None:
            return f"The profile '{cluster_profile_id}' could not be found."
        ptype, spec = profile.type, dict(profile.spec or {})
    try:
        driver = ex.ctx.drivers.get(ptype)
        return ptype, driver.validate_properties(spec.get("properties") or {})
    except HerdError as exc:
        return str(exc)


def attach_group(
    ex: ActionExecution, policy: AffinityPolicy, cluster_profile_id: str
) -> dict[str, object] | str:
    """Find or make the policy's server group: the binding's data, or why the attach fails."""
    profile = profile_of(ex, cluster_profile_id)
    if isinstance(profile, str):
        return profile
    ptype, properties = profile
    driver = ex.ctx.drivers.get(ptype)
    choice = policy.group_choice(properties)

    def look() -> dict[str, object] | None:
        if choice.name is None:
            return None
        found = driver.find_server_group(choice.name, properties)
        return asdict(found) if found is not None else None

    try:
        existing = ex.once("servergroup_found", look)
    except HerdError as exc:
        return f"Failed in retrieving servergroup '{choice.name}': {exc}"
    if existing is not None:
        mismatch = policy.mismatch(str(existing["policy"]))
        if mismatch:
            return mismatch
        return {"servergroup_id": existing["id"], "inherited_group": True}
    name = choice.name or f"server_group_{ex.id[:8]}"

    def make() -> dict[str, object]:
        # A run resumed after its engine died: the group its first run made has this name.
        found = driver.find_server_group(name, properties)
        if found is None:
            found = driver.create_server_group(name, choice.policy, properties)
        return asdict(found)

    try:
        made = ex.once("servergroup_made", make)
    except HerdError as exc:
        return f"Failed in creating servergroup: {exc}"
    return {"servergroup_id": made["id"], "inherited_group": False}


def release_group(
    ex: ActionExecution, data: Mapping[str, object], cluster_profile_id: str
) -> str | None:
    """Delete the server group a binding's attach made (its ``data``; never an inherited
    group); why it could not be, or None."""
    group_id = data.get("servergroup_id")
    if not group_id or data.get("inherited_group"):
        return None
    profile = profile_of(ex, cluster_profile_id)
    if isinstance(profile, str):
        return f"Failed in deleting servergroup: {profile}"
    ptype, properties = profile
    try:
        ex.ctx.drivers.get(ptype).delete_server_group(str(group_id), properties)
    except HerdError as exc:
        return f"Failed in deleting servergroup: {exc}"
    return None


def release_all(ex: ActionExecution, cluster_id: str, cluster_profile_id: str) -> str | None:
    """Before a cluster's bindings go with it: delete the groups they made (Senlin detached
    every policy before deleting a cluster). Why one could not be deleted, or None."""
    with ex.ctx.database.read() as session:
        made = [
            (binding.policy_id, dict(binding.data or {}))
            for binding in bindings.of_cluster(session, cluster_id)
            if (row := policies.get(session, binding.policy_id)) is not None
            and row.type.startswith(AffinityPolicy.type_name)
        ]
    for policy_id, data in made:
        reason = release_group(ex, data, cluster_profile_id)
        if reason:
            return f"Unable to detach policy {policy_id} before deletion: {reason}"
    return None
