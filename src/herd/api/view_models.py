"""The shapes of herd's views (Senlin's JSON), as TypedDicts.

The views (:mod:`herd.api.views`) build plain dicts, which mypy checks against these
types; the routes name them in ``responses=`` (:func:`answers`), so ``/openapi.json``'s
response schemas come from the same types. Nothing validates a response at run time:
a list of 1,000 nodes costs what it cost before (the hot reads encode with orjson).

A key that is not always there is ``NotRequired``: fields of later microversions
(``tainted`` from 1.13, an action's ``cluster_id`` from 1.14), herd's choices
(``show_nodes=false`` gives ``node_count`` instead of ``nodes``; ``summary=true``
counts cut lists) and what an agent token never reads (``herd.api.auth.AGENT_HIDDEN``).
"""

from __future__ import annotations

from typing import NotRequired

from pydantic import JsonValue

# typing_extensions: pydantic reads the schema of typing.TypedDict only from Python 3.12
from typing_extensions import TypedDict

#: a JSON object as stored (specs, metadata, data, inputs, ...)
JsonObject = dict[str, JsonValue]


class ProfileView(TypedDict):
    id: str
    name: str
    type: str
    user: str
    project: str
    domain: str
    spec: NotRequired[JsonObject]
    metadata: NotRequired[JsonObject]
    created_at: str | None
    updated_at: str | None


class ValidatedProfileView(TypedDict):
    """A profile validated, not stored (``POST /v1/profiles/validate``): its id is null, as
    Senlin's ``validated_profile``; else a :class:`ProfileView`."""

    id: None
    name: str
    type: str
    user: str
    project: str
    domain: str
    spec: NotRequired[JsonObject]
    metadata: NotRequired[JsonObject]
    created_at: str | None
    updated_at: str | None


class PolicyView(TypedDict):
    id: str
    name: str
    type: str
    user: str
    project: str
    domain: str
    spec: NotRequired[JsonObject]
    data: NotRequired[JsonObject]
    created_at: str | None
    updated_at: str | None


class ValidatedPolicyView(TypedDict):
    """A policy validated, not stored (``POST /v1/policies/validate``): its id is null, as
    Senlin's ``validated_policy``; else a :class:`PolicyView`."""

    id: None
    name: str
    type: str
    user: str
    project: str
    domain: str
    spec: NotRequired[JsonObject]
    data: NotRequired[JsonObject]
    created_at: str | None
    updated_at: str | None


class ClusterView(TypedDict):
    id: str
    name: str
    profile_id: str
    profile_name: str | None
    user: str
    project: str
    domain: str
    init_at: str | None
    created_at: str | None
    updated_at: str | None
    min_size: int
    max_size: int
    desired_capacity: int
    timeout: int
    status: str
    status_reason: str
    metadata: NotRequired[JsonObject]
    data: NotRequired[JsonObject]
    config: NotRequired[JsonObject]
    dependents: NotRequired[JsonObject]
    #: member ids; without them (``show_nodes=false``) ``node_count``
    nodes: NotRequired[list[str]]
    node_count: NotRequired[int]
    policies: list[str]
    #: herd: when the deletion started (None unless status is DELETING)
    deleted_at: str | None


class NodeView(TypedDict):
    id: str
    name: str
    cluster_id: str
    physical_id: str | None
    profile_id: str
    profile_name: str | None
    user: str
    project: str
    domain: str
    index: int
    role: str
    init_at: str | None
    created_at: str | None
    updated_at: str | None
    status: str
    status_reason: str
    metadata: NotRequired[JsonObject]
    data: NotRequired[JsonObject]
    dependents: NotRequired[JsonObject]
    health: str
    health_reason: str
    health_marked_by: str | None
    health_marked_at: str | None
    health_generation: int
    deleted_at: str | None
    #: herd: the health manager's last check of this node
    last_checked_at: str | None
    last_check_mode: str | None
    last_check_result: str | None
    last_check_reason: str | None
    tainted: NotRequired[bool]
    details: NotRequired[JsonObject]


class MarkAnswer(TypedDict):
    """``PATCH /v1/clusters/<c>/nodes/<n>``: the member after the mark, and what changed."""

    node: NodeView
    changed: bool
    message: str


class BindingView(TypedDict):
    id: str
    cluster_id: str
    cluster_name: str
    policy_id: str
    policy_name: str
    policy_type: str
    enabled: bool
    priority: int
    data: JsonObject
    last_op: str | None


class ActionView(TypedDict):
    id: str
    name: str
    action: str
    target: str
    cause: str
    owner: str | None
    interval: int
    start_time: float | None
    end_time: float | None
    timeout: int
    status: str
    status_reason: str
    inputs: JsonObject
    outputs: JsonObject
    depends_on: list[str]
    depended_by: list[str]
    created_at: str | None
    updated_at: str | None
    data: JsonObject
    user: str
    project: str
    cluster_id: NotRequired[str]
    #: herd: the API request that caused it
    request_id: str | None
    #: ``summary=true``: the dotted path of each list cut, and its full length
    truncated: NotRequired[dict[str, int]]


class EventView(TypedDict):
    id: str
    timestamp: str | None
    oid: str
    oname: str
    otype: str
    cluster_id: str
    level: str
    user: str
    project: str
    action: str
    status: str
    status_reason: str
    meta_data: JsonObject
    #: herd: the API request behind it
    request_id: str | None


class ReceiverView(TypedDict):
    id: str
    name: str
    type: str
    cluster_id: str | None
    action: str | None
    actor: JsonObject
    params: JsonObject
    channel: dict[str, str]
    user: str
    project: str
    domain: str
    created_at: str | None
    updated_at: str | None
