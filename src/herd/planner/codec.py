"""Read iallocator requests and write answers (Ganeti protocol version 2).

Errors are raised as :class:`MalformedRequest` whose message names the key
that is wrong, in the same spirit as hail's (``invalid request dict: key
'name': Unable to read String``). The command line turns them into exit 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from herd.errors import MalformedRequest
from herd.planner.fields import (
    as_bool,
    as_dict,
    as_int,
    as_list,
    as_num,
    as_str,
    as_strs,
    fail,
    optional,
    require,
)
from herd.planner.instances import read_instance, read_spec
from herd.planner.model import (
    AllocateRequest,
    AllocateSecondaryRequest,
    AllocPolicy,
    ChangeGroupRequest,
    ClusterData,
    EvacMode,
    Group,
    Instance,
    IPolicy,
    ISpec,
    MultiAllocateRequest,
    Node,
    NodeEvacuateRequest,
    RelocateRequest,
    Request,
)
from herd.planner.request_schema import check_numbers


def _ispec(value: object, where: str) -> ISpec:
    spec = as_dict(value, where)

    def read(key: str) -> int | None:
        return None if key not in spec else as_int(spec[key], f"{where}.{key}")

    return ISpec(
        memory_size=read("memory-size"),
        cpu_count=read("cpu-count"),
        disk_size=read("disk-size"),
        disk_count=read("disk-count"),
        nic_count=read("nic-count"),
        spindle_use=read("spindle-use"),
    )


def _ipolicy(value: object, where: str) -> IPolicy:
    policy = as_dict(value, where)
    minmax = []
    for i, bounds in enumerate(as_list(optional(policy, "minmax", []), f"{where}.minmax")):
        pair = as_dict(bounds, f"{where}.minmax[{i}]")
        minmax.append(
            (
                _ispec(require(pair, "min", f"{where}.minmax[{i}]"), f"{where}.minmax[{i}].min"),
                _ispec(require(pair, "max", f"{where}.minmax[{i}]"), f"{where}.minmax[{i}].max"),
            )
        )
    return IPolicy(
        minmax=tuple(minmax),
        disk_templates=as_strs(optional(policy, "disk-templates", []), f"{where}.disk-templates"),
        vcpu_ratio=as_num(optional(policy, "vcpu-ratio", 4.0), f"{where}.vcpu-ratio"),
        spindle_ratio=as_num(optional(policy, "spindle-ratio", 32.0), f"{where}.spindle-ratio"),
    )


def _group(uuid: str, value: object) -> Group:
    where = f"nodegroups['{uuid}']"
    group = as_dict(value, where)
    policy_name = as_str(require(group, "alloc_policy", where), f"{where}.alloc_policy")
    try:
        policy = AllocPolicy.from_wire(policy_name)
    except KeyError:
        raise fail(f"{where}.alloc_policy", f"invalid value {policy_name!r}") from None
    return Group(
        uuid=uuid,
        name=as_str(require(group, "name", where), f"{where}.name"),
        alloc_policy=policy,
        ipolicy=_ipolicy(require(group, "ipolicy", where), f"{where}.ipolicy"),
        networks=as_strs(optional(group, "networks", []), f"{where}.networks"),
        tags=as_strs(optional(group, "tags", []), f"{where}.tags"),
    )


def _node(name: str, value: object, groups: Mapping[str, Group], kvm_memory: int | None) -> Node:
    where = f"nodes['{name}']"
    node = as_dict(value, where)
    offline = as_bool(require(node, "offline", where), f"{where}.offline")
    drained = as_bool(require(node, "drained", where), f"{where}.drained")
    vm_capable = as_bool(optional(node, "vm_capable", True), f"{where}.vm_capable")
    group = as_str(require(node, "group", where), f"{where}.group")
    if group not in groups:
        raise fail(f"{where}.group", f"unknown node group {group!r}")
    ndparams = as_dict(require(node, "ndparams", where), f"{where}.ndparams")
    exclusive = as_bool(optional(ndparams, "exclusive_storage", False), f"{where}.ndparams")
    live = not offline and vm_capable

    def dyn(key: str) -> float:
        if live:
            return as_num(require(node, key, where), f"{where}.{key}")
        # Ganeti does not query offline or non-vm-capable nodes: no figures, none used. One
        # sent all the same is still held to its type (hail takes anything there).
        if key in node:
            as_num(node[key], f"{where}.{key}")
        return 0.0

    reserved = dyn("reserved_memory")
    if kvm_memory is not None and live:
        reserved = float(kvm_memory)
    spindle_count = as_num(
        optional(ndparams, "spindle_count", 1), f"{where}.ndparams.spindle_count"
    )
    # Read (so held to its type) for every node; used only for those Ganeti queries.
    reserved_cpus = as_num(optional(node, "reserved_cpus", 0), f"{where}.reserved_cpus")
    return Node(
        name=name,
        group=group,
        offline=offline,
        drained=drained,
        vm_capable=vm_capable,
        master_capable=as_bool(optional(node, "master_capable", True), f"{where}.master_capable"),
        tags=as_strs(optional(node, "tags", []), f"{where}.tags"),
        total_memory=dyn("total_memory"),
        reserved_memory=reserved,
        free_memory=dyn("free_memory"),
        total_disk=dyn("total_disk"),
        free_disk=dyn("free_disk"),
        total_cpus=dyn("total_cpus"),
        reserved_cpus=reserved_cpus if live else 0.0,
        spindle_count=spindle_count,
        total_spindles=as_num(optional(node, "total_spindles", 0), f"{where}.total_spindles"),
        free_spindles=as_num(optional(node, "free_spindles", 0), f"{where}.free_spindles"),
        exclusive_storage=exclusive,
    )


def _request(
    value: object, cluster_instances: Mapping[str, Instance], groups: Mapping[str, Group]
) -> Request:
    where = "invalid request dict"
    req = as_dict(value, "invalid iallocator message: key 'request'")
    kind = as_str(require(req, "type", where), f"{where}: key 'type'")

    def names(key: str) -> tuple[str, ...]:
        listed = as_strs(require(req, key, where), f"{where}: key '{key}'")
        for name in listed:
            if name not in cluster_instances:
                raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return listed

    if kind == "change-group":
        targets = as_strs(require(req, "target_groups", where), f"{where}: key 'target_groups'")
        known = set(groups) | {g.name for g in groups.values()}
        for target in targets:
            if target not in known:
                raise MalformedRequest(f"Wrong number of elems found with name {target}")
        return ChangeGroupRequest(instances=names("instances"), target_groups=targets)
    if kind == "node-evacuate":
        mode = as_str(require(req, "evac_mode", where), f"{where}: key 'evac_mode'")
        try:
            evac_mode = EvacMode(mode)
        except ValueError:
            raise MalformedRequest(
                f"{where}: key 'evac_mode': Invalid string value for type EvacMode: {mode!r}"
            ) from None
        return NodeEvacuateRequest(instances=names("instances"), evac_mode=evac_mode)
    if kind == "allocate":
        return _allocate(req, where)
    if kind == "multi-allocate":
        items = as_list(require(req, "instances", where), f"{where}: key 'instances'")
        return MultiAllocateRequest(
            instances=tuple(
                _allocate(as_dict(i, f"{where}[{n}]"), where) for n, i in enumerate(items)
            )
        )
    if kind == "relocate":
        name = as_str(require(req, "name", where), f"{where}: key 'name'")
        as_int(require(req, "required_nodes", where), f"{where}: key 'required_nodes'")
        as_int(require(req, "disk_space_total", where), f"{where}: key 'disk_space_total'")
        if name not in cluster_instances:
            raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return RelocateRequest(
            name=name,
            relocate_from=as_strs(
                require(req, "relocate_from", where), f"{where}: key 'relocate_from'"
            ),
        )
    if kind == "allocate-secondary":
        name = as_str(require(req, "name", where), f"{where}: key 'name'")
        if name not in cluster_instances:
            raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return AllocateSecondaryRequest(name=name)
    raise MalformedRequest(f"Invalid request type '{kind}'")


def _allocate(req: dict[str, object], where: str) -> AllocateRequest:
    require(req, "disks", where)
    restrict = req.get("restrict-to-nodes")
    return AllocateRequest(
        spec=read_spec(req, where),
        required_nodes=as_int(
            require(req, "required_nodes", where), f"{where}: key 'required_nodes'"
        ),
        group_name=None if req.get("group_name") is None else str(req["group_name"]),
        restrict_to_nodes=None if restrict is None else as_strs(restrict, f"{where}: restrict"),
    )


def parse_request(data: Mapping[str, object], static_kvm_node_memory: int = 4096) -> ClusterData:
    """Build the typed model of an iallocator request dict.

    Args:
        data: the decoded JSON object Ganeti wrote.
        static_kvm_node_memory: hail's override of ``reserved_memory`` when the
            first enabled hypervisor is kvm (0 turns it off).

    Returns:
        The cluster and the request, in file order.

    Raises:
        MalformedRequest: a key is missing or has the wrong type, a name does
            not exist, or a number is out of its range (``request_schema``:
            past 2^53 in magnitude, a CPU count negative or not whole).
    """
    top = as_dict(dict(data), "invalid iallocator message")
    check_numbers(top)
    request_value = require(top, "request", "invalid iallocator message")
    as_dict(request_value, "invalid iallocator message: key 'request'")
    hypervisors = as_strs(optional(top, "enabled_hypervisors", []), "enabled_hypervisors")
    hypervisor = hypervisors[0] if hypervisors else None
    kvm_memory = static_kvm_node_memory if hypervisor == "kvm" and static_kvm_node_memory else None
    groups_raw = as_dict(require(top, "nodegroups", "invalid iallocator message"), "nodegroups")
    groups = {uuid: _group(uuid, value) for uuid, value in groups_raw.items()}
    nodes_raw = as_dict(require(top, "nodes", "invalid iallocator message"), "nodes")
    nodes = [_node(name, value, groups, kvm_memory) for name, value in nodes_raw.items()]
    node_index = {node.name: i for i, node in enumerate(nodes)}
    inst_raw = as_dict(require(top, "instances", "invalid iallocator message"), "instances")
    instances = {name: read_instance(name, value, node_index) for name, value in inst_raw.items()}
    return ClusterData(
        cluster_tags=as_strs(optional(top, "cluster_tags", []), "cluster_tags"),
        hypervisor=hypervisor,
        groups=tuple(groups.values()),
        nodes=tuple(nodes),
        instances=tuple(instances.values()),
        request=_request(request_value, instances, groups),
    )


def format_answer(success: bool, info: str, result: object) -> str:
    """Serialise an answer exactly as hail does: compact, keys in fixed order."""
    prefix = "Request successful: " if success else "Request failed: "
    body = {"success": success, "info": prefix + info, "result": result if success else []}
    return json.dumps(body, separators=(",", ":"))
