"""herd's rules that ``/openapi.json`` cannot state, applied to the fuzz's positive cases.

Schemathesis' ``positive_data_acceptance`` check wants every request that fits the document
accepted. The document says what JSON Schema can (lengths, bounds, enums, patterns, required
keys, no NUL; docs/api.md "OpenAPI"); what it cannot is a rule about the database's content
or about two values at once. Before a positive case is sent, :func:`satisfy` makes it keep
those rules, each in one place below with the rule it stands for, so that a 400 the check
still sees is a rule the document could have stated (to be fixed there) or a bug in herd.
Negative cases and the hostile variants are left as they are.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from tests.functional.api.helpers import DELETION_SPEC, SIM_SPEC

#: list path -> the key of ``real`` naming one of its items (a marker must name an item)
MARKER_OF = {
    "/v1/clusters": "cluster_id",
    "/v1/nodes": "node_id",
    "/v1/profiles": "profile_id",
    "/v1/policies": "policy_id",
    "/v1/actions": "action_id",
    "/v1/events": "event_id",
    "/v1/receivers": "receiver_id",
    "/v1/clusters/{cluster_id}/policies": "binding_id",
}
#: updates whose service refuses one that changes nothing ("No property needs an update.")
UPDATES = {
    "/v1/clusters/{cluster_id}",
    "/v1/nodes/{node_id}",
    "/v1/profiles/{profile_id}",
    "/v1/receivers/{receiver_id}",
}
#: the parameters each built-in operation takes (the sim driver's, the real nodes' type)
OPERATION_PARAMS: dict[str, dict[str, str]] = {"signal": {"signal": "SIGHUP"}}
#: the keys Senlin wraps a resource's body in (``{"cluster": {...}}``)
ENVELOPES = ("cluster", "node", "profile", "policy", "receiver", "action")
#: body keys naming a resource -> the key of ``real`` (a reference must name an item)
REFERENCE_OF = {
    "profile_id": "profile_id",
    "policy_id": "policy_id",
    "cluster_id": "cluster_id",
}
#: a short id (a prefix of a UUID) this short may name several items: Senlin's 400
#: "Multiple results found" says the caller must be more specific
AMBIGUOUS = re.compile(r"[0-9a-fA-F-]{1,7}")
MAX_NODES = 1000  # Settings.max_nodes_per_cluster, the fuzz's app's
MEMBERS = 2  # the real cluster's size (test_fuzz_openapi._real_resources)


def ambiguous(case: Any) -> bool:
    """Whether a path parameter of ``case`` is a short id that may name several items."""
    return any(
        isinstance(value, str) and AMBIGUOUS.fullmatch(value) is not None
        for value in (case.path_parameters or {}).values()
    )


def satisfy(case: Any, path: str, method: str, real: dict[str, str], serial: int) -> None:
    """Make a positive ``case`` of ``method path`` keep the rules JSON Schema cannot state
    (``serial`` tells the cases apart)."""
    query = case.query
    if isinstance(query, dict) and isinstance(query.get("cluster_id"), str):
        # a cluster_id filter of the node list must name a cluster ("Cannot find the
        # given cluster"; the other lists answer an empty list)
        query["cluster_id"] = real["cluster_id"]
    if isinstance(query, dict) and "marker" in query:
        # a marker must name an item of the list it pages (400 "Invalid value ... 'marker'")
        kind = MARKER_OF.get(path)
        if kind is None:
            del query["marker"]
        else:
            query["marker"] = real[kind]
    body = case.body
    if not isinstance(body, dict):
        return
    # a free map (metadata, config, an operation's name and parameters) holds no NUL, in
    # its keys or its values at any depth: herd refuses it as in any string, but the
    # document says so only for the strings it declares (docs/api.md "OpenAPI": a pattern
    # on every free key and value made the fuzz 2x slower); test_unstorable_input pins it
    case.body = body = _without_nul(body)
    if method == "POST" and path == "/v1/relocation-plans":
        _iallocator_names(body)
        return
    envelope = _envelope(body)
    inner = envelope if isinstance(envelope, dict) else body
    _references(inner, real)
    if "spec" in inner:
        # a spec must be valid for its type: the type's validator is code (drivers,
        # policies), not a JSON schema; a real spec of the operation's kind stands in
        inner["spec"] = dict(DELETION_SPEC if "/policies" in path else SIM_SPEC)
    if method == "PUT" and path == "/v1/clusters/{cluster_id}/metadata/{key}":
        # the one key of ``meta`` must be the key the path names
        key = unquote(case.path_parameters.get("key", ""))  # Schemathesis keeps it quoted
        meta = body.get("meta")
        value = next(iter(meta.values()), "v") if isinstance(meta, dict) and meta else "v"
        body["meta"] = {key: value}
    _sizes(inner)
    for action, kind in (
        ("add_nodes", "orphan_id"),
        ("del_nodes", "node_id"),
        ("preview_del_nodes", "node_id"),
    ):
        if isinstance(body.get(action), dict) and body[action].get("nodes"):
            # the nodes named must exist, a member to delete, a node of no cluster to add
            body[action]["nodes"] = [real[kind]]
    if isinstance(body.get("replace_nodes"), dict) and body["replace_nodes"].get("nodes"):
        # a replacement maps a member to a node of no cluster, each new node once
        body["replace_nodes"]["nodes"] = {real["node_id"]: real["orphan_id"]}
    for action in ("resize", "preview_resize"):
        params = body.get(action)
        if isinstance(params, dict) and (params.get("adjustment_type") is None) != (
            params.get("number") is None
        ):
            # adjustment_type and number come as a pair (Senlin's "Missing number value
            # for size adjustment."): a rule between two fields
            params.pop("adjustment_type", None)
            params.pop("number", None)
            if not any(params.get(k) is not None for k in ("min_size", "max_size")):
                params["min_size"] = 0
        if isinstance(params, dict):
            _resize_fits(params)
    if method == "PATCH" and path in UPDATES:
        # an update must change a stored value: whether it does depends on the row
        inner["name"] = f"fuzz-{serial}"
    if path in ("/v1/receivers", "/v1/receivers/{receiver_id}") and inner.get("params"):
        # a receiver's params are its action's parameters (the model of that action)
        inner["params"] = {}
    if path.endswith("/ops"):
        # an operation takes its profile type's parameters (drivers declare them, and the
        # body is checked against the node's type); a cluster's filters must match members
        for name in list(body):
            params = OPERATION_PARAMS.get(name, {})
            body[name] = {"params": params} if path.startswith("/v1/clusters") else params


def _envelope(body: dict[str, Any]) -> Any:
    """The value of a body's only key, or of its envelope: beside it a body may hold other
    keys, which herd ignores as Senlin did (the document says ``additionalProperties``)."""
    if len(body) == 1:
        return next(iter(body.values()))
    return next((body[key] for key in ENVELOPES if key in body), None)


def _without_nul(value: Any) -> Any:
    """``value`` with NUL taken out of every string and map key, at any depth."""
    if isinstance(value, dict):
        return {str(k).replace("\0", ""): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    if isinstance(value, str):
        return value.replace("\0", "")
    return value


def _resize_fits(params: dict[str, Any]) -> None:
    """A resize of the real cluster (2 members) must land within its new bounds, which
    depend on its current size: the new bounds keep 2 and the adjustment asks for 2."""
    if isinstance(params.get("min_size"), int | float):
        params["min_size"] = min(int(params["min_size"]), MEMBERS)
    if isinstance(params.get("max_size"), int | float) and params["max_size"] != -1:
        params["max_size"] = max(int(params["max_size"]), MEMBERS)
    if params.get("adjustment_type") is not None:
        params["adjustment_type"], params["number"] = "EXACT_CAPACITY", MEMBERS


def _references(value: Any, real: dict[str, str]) -> None:
    """Body keys naming a profile, policy or cluster name the real ones (they must exist)."""
    if isinstance(value, dict):
        for key, item in list(value.items()):
            if key in REFERENCE_OF and isinstance(item, str | int | float):
                value[key] = real[REFERENCE_OF[key]]
            else:
                _references(item, real)
    elif isinstance(value, list):
        for item in value:
            _references(item, real)


def _sizes(body: dict[str, Any]) -> None:
    """min_size <= desired_capacity <= max_size <= max_nodes_per_cluster (max_size -1: no
    upper bound), which Senlin checks across the fields."""
    keys = ("min_size", "desired_capacity", "max_size")
    given = {
        k: int(body[k])
        for k in keys
        if isinstance(body.get(k), int | float) and not isinstance(body[k], bool)
    }
    if not given:
        return
    for key, number in given.items():
        if not (key == "max_size" and number == -1):
            given[key] = min(number, MAX_NODES)
    bounded = sorted(v for k, v in given.items() if not (k == "max_size" and v == -1))
    ordered = iter(bounded)
    for key in keys:
        if key in given and not (key == "max_size" and given[key] == -1):
            body[key] = next(ordered)


#: a group, a live node and an instance, added to an iallocator message that has none where a
#: rule below needs one to name (the figures are Ganeti's test data's)
GROUP = {"name": "fuzz-group", "alloc_policy": "preferred", "ipolicy": {}}
NODE = {
    "offline": False,
    "drained": False,
    "group": "",
    "ndparams": {},
    "reserved_memory": 1024,
    "total_memory": 32768,
    "free_memory": 31744,
    "total_disk": 1_000_000,
    "free_disk": 1_000_000,
    "total_cpus": 8,
}
INSTANCE = {
    "disk_template": "plain",
    "disks": [{"size": 1024}],
    "nics": [],
    "memory": 128,
    "vcpus": 1,
    "disk_space_total": 1024,
    "spindle_use": 1,
    "tags": [],
    "nodes": [],
}


def _names(wanted: object, known: list[str]) -> list[str]:
    """``wanted`` (a generated list of names) as as many names of ``known``, in turn."""
    count = max(len(wanted), 1) if isinstance(wanted, list) else 1
    return [known[i % len(known)] for i in range(count)]


def _iallocator_names(body: dict[str, Any]) -> None:
    """The names an iallocator message uses must be names it defines (planner/codec.py):
    the schema (planner/request_schema.py) says each map's shape, not its keys."""
    groups, nodes, instances = body["nodegroups"], body["nodes"], body["instances"]
    request = body["request"]
    kind = request["type"]
    # a node's group must be a key of nodegroups ("unknown node group")
    if nodes and not groups:
        groups["fuzz-group"] = dict(GROUP)
    for node in nodes.values():
        node["group"] = next(iter(groups))
    # the request's instances must exist ("Wrong number of elems found with name ...")
    named = kind in ("relocate", "allocate-secondary", "change-group", "node-evacuate")
    if named and not instances:
        instances["fuzz-instance"] = dict(INSTANCE)
    # an instance's nodes must be keys of nodes ("Wrong number of elems found with name ...")
    if instances and not nodes:
        if not groups:
            groups["fuzz-group"] = dict(GROUP)
        nodes["fuzz-node"] = {**NODE, "group": next(iter(groups))}
    for instance in instances.values():
        instance["nodes"] = _names(instance["nodes"], list(nodes))
    if kind in ("relocate", "allocate-secondary"):
        request["name"] = next(iter(instances))
    elif kind in ("change-group", "node-evacuate"):
        request["instances"] = _names(request["instances"], list(instances))
    if kind == "change-group":
        # a target group must be a group's key or name ("Wrong number of elems found ...")
        request["target_groups"] = _names(request["target_groups"], list(groups) or ["-"])
