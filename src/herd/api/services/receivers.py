"""Receivers: create, update, delete, and the cluster actions a receiver may run.

A webhook receiver names a cluster, one of the asynchronous keys of
``POST /v1/clusters/<id>/actions`` (as its action name, e.g. CLUSTER_SCALE_OUT)
and default ``params``. Its parameters go through that endpoint's own validation:
at create and update each given parameter is checked by the action's request model
(unknown keys, types, ranges), and when the webhook fires the merged parameters go
through the action's handler, which also checks them against the cluster as it is
then (sizes, members, bindings) and supplies what depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.base import RequestModel, check_given
from herd.api.schemas.cluster_actions import (
    CheckParams,
    DelNodesParams,
    NodesParams,
    PolicyAttachParams,
    PolicyDetachParams,
    PolicyUpdateParams,
    RecoverParams,
    ReplaceNodesParams,
    ReplaceUnhealthyParams,
    ResizeParams,
    ScaleInParams,
    ScaleOutParams,
)
from herd.api.schemas.receivers import NOT_FOR_RECEIVERS, ReceiverCreate, ReceiverUpdate
from herd.api.services.common import refuse_if_deleting
from herd.api.services.spec_resources import sync_event
from herd.errors import InvalidRequest, NotFound
from herd.store import receivers as store
from herd.store.database import Session
from herd.store.lookup import Scope, find
from herd.store.models import ClusterRow, ReceiverRow
from herd.types import ActionName, ResourceType

WEBHOOK = "webhook"
MESSAGE = "message"


@dataclass(frozen=True)
class ReceiverAction:
    """A cluster action a receiver may run: its key in the actions body and its model."""

    key: str
    params: type[RequestModel]


RECEIVER_ACTIONS: dict[ActionName, ReceiverAction] = {
    ActionName.CLUSTER_SCALE_OUT: ReceiverAction("scale_out", ScaleOutParams),
    ActionName.CLUSTER_SCALE_IN: ReceiverAction("scale_in", ScaleInParams),
    ActionName.CLUSTER_RESIZE: ReceiverAction("resize", ResizeParams),
    ActionName.CLUSTER_ADD_NODES: ReceiverAction("add_nodes", NodesParams),
    ActionName.CLUSTER_DEL_NODES: ReceiverAction("del_nodes", DelNodesParams),
    ActionName.CLUSTER_REPLACE_NODES: ReceiverAction("replace_nodes", ReplaceNodesParams),
    ActionName.CLUSTER_CHECK: ReceiverAction("check", CheckParams),
    ActionName.CLUSTER_RECOVER: ReceiverAction("recover", RecoverParams),
    ActionName.CLUSTER_ATTACH_POLICY: ReceiverAction("policy_attach", PolicyAttachParams),
    ActionName.CLUSTER_DETACH_POLICY: ReceiverAction("policy_detach", PolicyDetachParams),
    ActionName.CLUSTER_UPDATE_POLICY: ReceiverAction("policy_update", PolicyUpdateParams),
    ActionName.CLUSTER_REPLACE_UNHEALTHY: ReceiverAction(
        "replace_unhealthy", ReplaceUnhealthyParams
    ),
}


def receiver_action(name: str) -> tuple[ActionName, ReceiverAction]:
    """The action a receiver may run under this name, or Senlin's 400 naming the refused ones."""
    try:
        action = ActionName(name)
        return action, RECEIVER_ACTIONS[action]
    except (ValueError, KeyError):
        raise InvalidRequest(
            f"Action name cannot be any of {list(NOT_FOR_RECEIVERS)}.", field="action"
        ) from None


def check_params(
    services: Services, action: ReceiverAction, params: dict[str, object] | None
) -> dict[str, object]:
    """Check the parameters a receiver stores (each trigger may add the missing ones)."""
    context = {"max_nodes_per_cluster": services.settings.max_nodes_per_cluster}
    check_given(action.params, params or {}, label=action.key, context=context)
    return dict(params or {})


def target_cluster(session: Session, scope: Scope, identity: str) -> ClusterRow:
    """The cluster a receiver names: unknown is 400 with Senlin's "referenced" text."""
    try:
        cluster = find(session, ClusterRow, identity, scope, "cluster")
    except NotFound:
        raise InvalidRequest(
            f"The referenced cluster '{identity}' could not be found.", field="cluster_id"
        ) from None
    refuse_if_deleting(session, ResourceType.CLUSTER, [cluster.id])
    return cluster


def channel(row: ReceiverRow, key: bytes) -> dict[str, str]:
    """The URLs a webhook receiver answers on (Senlin's ``alarm_url``, herd's Alertmanager one).

    Empty when the secret cannot be derived under this webhook key (see
    store/receivers.py): the old URLs still work, and rotating the secret shows new ones.
    """
    secret = store.secret_of(row, key)
    if secret is None:
        return {}
    base = f"{row.webhook_base.rstrip('/')}/v1/webhooks/{row.id}"
    return {
        "alarm_url": f"{base}/trigger?V=2&secret={secret}",
        "alertmanager_url": f"{base}/alertmanager?secret={secret}",
    }


def create_receiver(
    session: Session,
    services: Services,
    ctx: RequestContext,
    request: ReceiverCreate,
    base_url: str,
) -> ReceiverRow:
    """Store a webhook receiver (its secret's digest, and where its URLs point)."""
    if request.type is None:
        raise InvalidRequest("'type' is a required property", field="type")
    if request.type == MESSAGE:
        raise InvalidRequest(
            "Receivers of type 'message' are not supported by herd: they read a Zaqar "
            "queue, and herd has no Zaqar. Use type 'webhook' (its URL also accepts "
            "Alertmanager notifications).",
            field="type",
        )
    if request.cluster_id is None:
        raise InvalidRequest(
            "Cluster identity is required for creating webhook receiver.", field="cluster_id"
        )
    if request.action is None:
        raise InvalidRequest(
            "Action name is required for creating webhook receiver.", field="action"
        )
    action, spec = receiver_action(request.action)
    params = check_params(services, spec, request.params)
    cluster = target_cluster(session, ctx.own_scope(), request.cluster_id)
    row, _secret = store.new_receiver(
        name=request.name,
        type_=WEBHOOK,
        cluster_id=cluster.id,
        action=action.value,
        params=params,
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=services.now(),
        webhook_base=base_url,
        key=services.webhook_key,
    )
    store.add(session, row)
    sync_event(session, services, ctx, "receiver", row, "RECEIVER_CREATE")
    return row


def find_receiver(session: Session, ctx: RequestContext, identity: str) -> ReceiverRow:
    row: ReceiverRow = find(session, ReceiverRow, identity, ctx.scope(), "receiver")
    return row


def update_receiver(
    session: Session,
    services: Services,
    ctx: RequestContext,
    identity: str,
    request: ReceiverUpdate,
    base_url: str,
) -> ReceiverRow:
    """Change name, action, params or secret; 400 when nothing would change (as Senlin).

    A new action's parameters are checked against it: the new ``params`` when given,
    else the stored ones. A new secret gives new URLs; the old ones stop working.
    """
    row = find_receiver(session, ctx, identity)
    changed = False
    if request.name is not None and request.name != row.name:
        row.name = request.name
        changed = True
    action_name = request.action if request.action is not None else row.action
    _, spec = receiver_action(str(action_name))
    params = row.params if request.params is None else request.params
    if request.action is not None or request.params is not None:
        params = check_params(services, spec, params)
    if request.action is not None and request.action != row.action:
        row.action = request.action
        changed = True
    if request.params is not None and params != row.params:
        row.params = params
        changed = True
    if request.rotate_secret:
        store.rotate_secret(row, services.webhook_key)
        row.webhook_base = base_url
        changed = True
    if not changed:
        raise InvalidRequest("No property needs an update.")
    row.updated_at = services.now()
    sync_event(session, services, ctx, "receiver", row, "RECEIVER_UPDATE")
    return row


def delete_receiver(
    session: Session, services: Services, ctx: RequestContext, identity: str
) -> None:
    row = find_receiver(session, ctx, identity)
    sync_event(session, services, ctx, "receiver", row, "RECEIVER_DELETE")
    store.delete_receiver(session, row)
