"""Body parsing with Senlin's texts, the fail-fast checks, and action submission."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.errors import ActionConflict, InvalidRequest, NotFound, ResourceDeleting, ResourceLocked
from herd.store import tombstones
from herd.store.actions import active_actions_on, new_action
from herd.store.locks import cluster_lock_holders, node_lock_holder
from herd.store.lookup import Scope, find
from herd.store.models import ActionRow
from herd.types import ActionName, ActionStatus

BOOL_TRUE = ("1", "t", "true", "on", "y", "yes")
BOOL_FALSE = ("0", "f", "false", "off", "n", "no")
BOOL_ACCEPTED = "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"
LOCK_BYPASS = frozenset({ActionName.CLUSTER_DELETE, ActionName.NODE_DELETE})


def unwrap(body: Any, key: str) -> dict[str, Any]:
    """The inner map of a Senlin envelope such as ``{"cluster": {...}}``."""
    if not isinstance(body, Mapping) or body.get(key) is None:
        raise InvalidRequest(
            f"Malformed request data, missing '{key}' key in request body.", field=key
        )
    inner = body[key]
    if not isinstance(inner, Mapping):
        raise InvalidRequest("The data provided is not a map", field=key)
    return dict(inner)


def reject_unknown(data: Mapping[str, Any], allowed: Iterable[str]) -> None:
    extra = sorted(set(data) - set(allowed))
    if extra:
        names = ", ".join(f"'{name}'" for name in extra)
        verb = "was" if len(extra) == 1 else "were"
        raise InvalidRequest(
            f"Additional properties are not allowed ({names} {verb} unexpected)", field=extra[0]
        )


def require(data: Mapping[str, Any], key: str) -> Any:
    if data.get(key) is None:
        raise InvalidRequest(f"'{key}' is a required property", field=key)
    return data[key]


def get_int(
    data: Mapping[str, Any],
    key: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    non_negative: bool = False,
) -> int | None:
    """An optional integer field, coerced as Senlin's object fields do."""
    value = data.get(key)
    if value is None:
        return None
    text = f"The value for {key} must be an integer: '{value}'."
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise InvalidRequest(text, field=key)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidRequest(text, field=key) from None
    if non_negative and number < 0:
        raise InvalidRequest(f"Value must be >= 0 for field '{key}'.", field=key)
    if minimum is not None and number < minimum:
        raise InvalidRequest(
            f"The value for the {key} field must be greater than or equal to {minimum}.",
            field=key,
        )
    if maximum is not None and number > maximum:
        raise InvalidRequest(
            f"The value for the {key} field must be less than or equal to {maximum}.", field=key
        )
    return number


def get_bool(data: Mapping[str, Any], key: str) -> bool | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in BOOL_TRUE:
        return True
    if text in BOOL_FALSE:
        return False
    raise InvalidRequest(
        f"Unrecognized value '{value}', acceptable values are: {BOOL_ACCEPTED}", field=key
    )


def get_str(data: Mapping[str, Any], key: str, *, max_length: int = 255) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise InvalidRequest(f"The value '{value}' is not a valid string.", field=key)
    text = str(value)
    if len(text) > max_length:
        raise InvalidRequest(
            f"The value for {key} is too long: at most {max_length} characters.", field=key
        )
    return text


def get_name(data: Mapping[str, Any], key: str = "name") -> str:
    name = get_str(data, key)
    if name is None:
        raise InvalidRequest(f"'{key}' is a required property", field=key)
    if not name.strip():
        raise InvalidRequest(f"The value for {key} must not be empty.", field=key)
    return name


def get_map(data: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidRequest(f"The value ({value}) is not a valid JSON map for '{key}'.", field=key)
    return dict(value)


def find_referenced(
    session: Session, model: type[Any], identity: Any, scope: Scope, kind: str
) -> Any:
    """Find a resource named inside a request body: unknown ones are 400, as Senlin."""
    if not isinstance(identity, str) or not identity:
        raise InvalidRequest(f"The specified {kind} '{identity}' could not be found.", field=kind)
    try:
        row = find(session, model, identity, scope, kind)
    except NotFound:
        raise InvalidRequest(
            f"The specified {kind} '{identity}' could not be found.", field=f"{kind}_id"
        ) from None
    refuse_if_deleting(session, kind, [row.id])
    return row


def refuse_if_deleting(session: Session, kind: str, ids: Iterable[str | None]) -> None:
    """Creating or changing anything that refers to a tombstoned resource is a 409."""
    found = tombstones.tombstoned(session, kind, [i for i in ids if i])
    if found:
        first = sorted(found)[0]
        raise ResourceDeleting(
            f"The {kind} '{first}' is being deleted: it cannot be used or changed.",
            resource_type=kind,
            resource_id=first,
        )


def _referenced_ids(inputs: Mapping[str, Any]) -> dict[str, list[str]]:
    """Resources an action's inputs name (policy to attach, nodes to add or swap, profile)."""
    nodes: list[str] = []
    for key in ("nodes", "candidates"):
        value = inputs.get(key)
        if isinstance(value, Mapping):
            nodes += [str(k) for k in value] + [str(v) for v in value.values()]
        elif isinstance(value, list | tuple):
            nodes += [str(v) for v in value]
    policy = inputs.get("policy_id")
    profile = inputs.get("profile_id")
    return {
        "node": nodes,
        "policy": [str(policy)] if policy else [],
        "profile": [str(profile)] if profile else [],
    }


def check_fail_fast(session: Session, action: ActionName, target: str, dead_before: float) -> None:
    """Senlin's fail-fast checks: a locked target or a conflicting active action is 409."""
    if action in LOCK_BYPASS:
        return
    if action.is_cluster_action:
        locked = bool(cluster_lock_holders(session, target, dead_before))
        kind = "cluster"
    else:
        locked = node_lock_holder(session, target, dead_before) is not None
        kind = "node"
    if locked:
        raise ResourceLocked(
            f"{action.value} for {kind} '{target}' cannot be completed because it is "
            "already locked."
        )
    active = active_actions_on(session, target)
    if active:
        ids = ",".join(row.id for row in active)
        raise ActionConflict(
            f"The {action.value} action for target {target} conflicts with the following "
            f"action(s): {ids}"
        )


def submit(
    session: Session,
    services: Services,
    ctx: RequestContext,
    action: ActionName,
    *,
    target: str,
    cluster_id: str | None,
    project: str,
    inputs: dict[str, Any] | None = None,
    timeout: int | None = None,
    check: bool = True,
) -> ActionRow:
    """Run the fail-fast checks and add a READY action row for the engine.

    Every action but a delete is refused (409) while its target, its cluster or a
    resource its inputs name is being deleted.
    """
    if action not in LOCK_BYPASS:
        target_kind = "cluster" if action.is_cluster_action else "node"
        refuse_if_deleting(session, target_kind, [target])
        refuse_if_deleting(session, "cluster", [cluster_id])
        for kind, ids in _referenced_ids(inputs or {}).items():
            refuse_if_deleting(session, kind, ids)
    if check:
        check_fail_fast(session, action, target, services.dead_before())
    row = new_action(
        action=action,
        target=target,
        cluster_id=cluster_id,
        project=project,
        user=ctx.user,
        inputs=inputs or {},
        status=ActionStatus.READY,
        timeout=timeout if timeout is not None else services.settings.default_action_timeout,
        now=services.now(),
    )
    session.add(row)
    if services.engine is not None:
        session.info.setdefault("after_commit", []).append(services.engine.notify)
    return row


def location(action_id: str) -> dict[str, str]:
    return {"Location": f"/v1/actions/{action_id}"}
