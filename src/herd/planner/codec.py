"""Read iallocator requests and write answers (Ganeti protocol version 2).

Errors are raised as :class:`MalformedRequest` whose message names the key
that is wrong, in the same spirit as hail's (``invalid request dict: key
'name': Unable to read String``). The command line turns them into exit 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from herd.errors import InvalidRequest
from herd.planner.model import (
    AdminState,
    AllocateRequest,
    AllocateSecondaryRequest,
    AllocPolicy,
    ChangeGroupRequest,
    ClusterData,
    DiskTemplate,
    EvacMode,
    Group,
    Instance,
    InstanceSpec,
    IPolicy,
    ISpec,
    MultiAllocateRequest,
    Node,
    NodeEvacuateRequest,
    RelocateRequest,
    Request,
)


class MalformedRequest(InvalidRequest):
    """The iallocator input cannot be understood."""

    code = "MalformedIAllocatorRequest"


def _fail(where: str, message: str) -> MalformedRequest:
    return MalformedRequest(f"{where}: {message}", field=where)


def _key(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        present = ", ".join(sorted(obj)) or "nothing"
        raise _fail(where, f"key '{key}' not found, object contains only [{present}]")
    return obj[key]


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"Unable to read JSObject (got {type(value).__name__})")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"Unable to read list (got {type(value).__name__})")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"Unable to read String (got {json.dumps(value)})")
    return value


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(where, f"Unable to read number (got {json.dumps(value)})")
    return float(value)


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(where, f"Unable to read Int (got {json.dumps(value)})")
    return int(value)


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, f"Unable to read Bool (got {json.dumps(value)})")
    return value


def _strs(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_str(item, f"{where}[{i}]") for i, item in enumerate(_list(value, where)))


def _opt(obj: Mapping[str, Any], key: str, default: Any) -> Any:
    value = obj.get(key, default)
    return default if value is None else value


def load_json(text: str) -> dict[str, Any]:
    """Decode the request text into a dict.

    Raises:
        MalformedRequest: the text is not JSON or not a JSON object.
    """
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MalformedRequest(f"Parsing input IAllocator message: Invalid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise MalformedRequest("invalid iallocator message: Unable to read JSObject")
    return value


def _ispec(value: Any, where: str) -> ISpec:
    spec = _dict(value, where)

    def read(key: str) -> int | None:
        return None if key not in spec else _int(spec[key], f"{where}.{key}")

    return ISpec(
        memory_size=read("memory-size"),
        cpu_count=read("cpu-count"),
        disk_size=read("disk-size"),
        disk_count=read("disk-count"),
        nic_count=read("nic-count"),
        spindle_use=read("spindle-use"),
    )


def _ipolicy(value: Any, where: str) -> IPolicy:
    policy = _dict(value, where)
    minmax = []
    for i, bounds in enumerate(_list(_opt(policy, "minmax", []), f"{where}.minmax")):
        pair = _dict(bounds, f"{where}.minmax[{i}]")
        minmax.append(
            (
                _ispec(_key(pair, "min", f"{where}.minmax[{i}]"), f"{where}.minmax[{i}].min"),
                _ispec(_key(pair, "max", f"{where}.minmax[{i}]"), f"{where}.minmax[{i}].max"),
            )
        )
    return IPolicy(
        minmax=tuple(minmax),
        disk_templates=_strs(_opt(policy, "disk-templates", []), f"{where}.disk-templates"),
        vcpu_ratio=_num(_opt(policy, "vcpu-ratio", 4.0), f"{where}.vcpu-ratio"),
        spindle_ratio=_num(_opt(policy, "spindle-ratio", 32.0), f"{where}.spindle-ratio"),
    )


def _group(uuid: str, value: Any) -> Group:
    where = f"nodegroups['{uuid}']"
    group = _dict(value, where)
    policy_name = _str(_key(group, "alloc_policy", where), f"{where}.alloc_policy")
    try:
        policy = AllocPolicy.from_wire(policy_name)
    except KeyError:
        raise _fail(f"{where}.alloc_policy", f"invalid value {policy_name!r}") from None
    return Group(
        uuid=uuid,
        name=_str(_key(group, "name", where), f"{where}.name"),
        alloc_policy=policy,
        ipolicy=_ipolicy(_key(group, "ipolicy", where), f"{where}.ipolicy"),
        networks=_strs(_opt(group, "networks", []), f"{where}.networks"),
        tags=_strs(_opt(group, "tags", []), f"{where}.tags"),
    )


def _node(name: str, value: Any, groups: Mapping[str, Group], kvm_memory: int | None) -> Node:
    where = f"nodes['{name}']"
    node = _dict(value, where)
    offline = _bool(_key(node, "offline", where), f"{where}.offline")
    drained = _bool(_key(node, "drained", where), f"{where}.drained")
    vm_capable = _bool(_opt(node, "vm_capable", True), f"{where}.vm_capable")
    group = _str(_key(node, "group", where), f"{where}.group")
    if group not in groups:
        raise _fail(f"{where}.group", f"unknown node group {group!r}")
    ndparams = _dict(_key(node, "ndparams", where), f"{where}.ndparams")
    exclusive = _bool(_opt(ndparams, "exclusive_storage", False), f"{where}.ndparams")
    live = not offline and vm_capable

    def dyn(key: str) -> float:
        # Ganeti does not query offline or non-vm-capable nodes: no figures.
        if not live:
            return 0.0
        return _num(_key(node, key, where), f"{where}.{key}")

    reserved = dyn("reserved_memory")
    if kvm_memory is not None and live:
        reserved = float(kvm_memory)
    spindle_count = _num(_opt(ndparams, "spindle_count", 1), f"{where}.ndparams.spindle_count")
    return Node(
        name=name,
        group=group,
        offline=offline,
        drained=drained,
        vm_capable=vm_capable,
        master_capable=_bool(_opt(node, "master_capable", True), f"{where}.master_capable"),
        tags=_strs(_opt(node, "tags", []), f"{where}.tags"),
        total_memory=dyn("total_memory"),
        reserved_memory=reserved,
        free_memory=dyn("free_memory"),
        total_disk=dyn("total_disk"),
        free_disk=dyn("free_disk"),
        total_cpus=dyn("total_cpus"),
        reserved_cpus=_num(_opt(node, "reserved_cpus", 0), f"{where}.reserved_cpus") if live else 0,
        spindle_count=spindle_count,
        total_spindles=_num(_opt(node, "total_spindles", 0), f"{where}.total_spindles"),
        free_spindles=_num(_opt(node, "free_spindles", 0), f"{where}.free_spindles"),
        exclusive_storage=exclusive,
    )


def _spec(value: Any, where: str, name: str | None = None) -> InstanceSpec:
    inst = _dict(value, where)
    if name is None:
        name = _str(_key(inst, "name", where), f"{where}.name")
    template_name = _str(_key(inst, "disk_template", where), f"{where}.disk_template")
    try:
        template = DiskTemplate(template_name)
    except ValueError:
        raise _fail(f"{where}.disk_template", f"unknown disk template {template_name!r}") from None
    disks = [_dict(d, f"{where}.disks[{i}]") for i, d in enumerate(_list(inst["disks"], where))]
    sizes = tuple(_int(_key(d, "size", f"{where}.disks[{i}]"), where) for i, d in enumerate(disks))
    spindles: int | None = 0
    for i, disk in enumerate(disks):
        if disk.get("spindles") is None:
            spindles = None
        elif spindles is not None:
            spindles += _int(disk["spindles"], f"{where}.disks[{i}].spindles")
    state_name = _str(_opt(inst, "admin_state", "up"), f"{where}.admin_state")
    try:
        state = AdminState(state_name)
    except ValueError:
        raise _fail(f"{where}.admin_state", f"invalid value {state_name!r}") from None
    nics = _list(_key(inst, "nics", where), f"{where}.nics")
    networks = tuple(
        str(nic["network"]) for nic in nics if isinstance(nic, dict) and nic.get("network")
    )
    return InstanceSpec(
        name=name,
        memory=_int(_key(inst, "memory", where), f"{where}.memory"),
        vcpus=_int(_key(inst, "vcpus", where), f"{where}.vcpus"),
        disk_template=template,
        disk_space_total=_int(_key(inst, "disk_space_total", where), f"{where}.disk_space_total"),
        disk_sizes=sizes,
        disk_spindles=spindles,
        spindle_use=_int(_key(inst, "spindle_use", where), f"{where}.spindle_use"),
        nic_count=len(nics),
        tags=_strs(_key(inst, "tags", where), f"{where}.tags"),
        admin_state=state,
        forthcoming=_bool(_opt(inst, "forthcoming", False), f"{where}.forthcoming"),
        networks=networks,
    )


_TEMPLATES = {t.value: t for t in DiskTemplate}
_STATES = {s.value: s for s in AdminState}


def _is_int(value: Any) -> bool:
    return type(value) is int


def _instance_fast(name: str, inst: Any, node_names: Mapping[str, int]) -> Instance | None:
    """The common, well-formed case without per-field error bookkeeping.

    Returns None on anything unusual, so that the checked path reports it.
    """
    if type(inst) is not dict:
        return None
    get = inst.get
    nodes, disks, nics, tags = get("nodes"), get("disks"), get("nics"), get("tags")
    memory, vcpus, total, spindle_use = (
        get("memory"),
        get("vcpus"),
        get("disk_space_total"),
        get("spindle_use"),
    )
    template = _TEMPLATES.get(get("disk_template"))  # type: ignore[arg-type]
    state = _STATES.get(get("admin_state") or "up")
    forthcoming = get("forthcoming") or False
    if (
        template is None
        or state is None
        or type(nodes) is not list
        or not nodes
        or type(disks) is not list
        or type(nics) is not list
        or type(tags) is not list
        or not (_is_int(memory) and _is_int(vcpus) and _is_int(total) and _is_int(spindle_use))
        or type(forthcoming) is not bool
        or not all(type(n) is str and n in node_names for n in nodes)
        or not all(type(t) is str for t in tags)
        or not all(type(d) is dict and _is_int(d.get("size")) for d in disks)
        or any(type(nic) is dict and nic.get("network") for nic in nics)
    ):
        return None
    spindles: int | None = 0
    for disk in disks:
        count = disk.get("spindles")
        if count is None:
            spindles = None
            break
        if not _is_int(count):
            return None
        spindles += count
    spec = InstanceSpec(
        name=name,
        memory=memory,  # type: ignore[arg-type]
        vcpus=vcpus,  # type: ignore[arg-type]
        disk_template=template,
        disk_space_total=total,  # type: ignore[arg-type]
        disk_sizes=tuple(d["size"] for d in disks),
        disk_spindles=spindles,
        spindle_use=spindle_use,  # type: ignore[arg-type]
        nic_count=len(nics),
        tags=tuple(tags),
        admin_state=state,
        forthcoming=forthcoming,
    )
    return Instance(spec=spec, nodes=tuple(nodes))


def _instance(name: str, value: Any, node_names: Mapping[str, int]) -> Instance:
    fast = _instance_fast(name, value, node_names)
    if fast is not None:
        return fast
    where = f"instances['{name}']"
    inst = _dict(value, where)
    _key(inst, "disks", where)
    nodes = _strs(_key(inst, "nodes", where), f"{where}.nodes")
    if not nodes:
        raise _fail(f"{where}.nodes", "empty node list")
    for node in nodes:
        if node not in node_names:
            raise MalformedRequest(f"Wrong number of elems found with name {node}")
    return Instance(spec=_spec(inst, where, name), nodes=nodes)


def _request(
    value: Any, cluster_instances: Mapping[str, Instance], groups: Mapping[str, Group]
) -> Request:
    where = "invalid request dict"
    req = _dict(value, "invalid iallocator message: key 'request'")
    kind = _str(_key(req, "type", where), f"{where}: key 'type'")

    def names(key: str) -> tuple[str, ...]:
        listed = _strs(_key(req, key, where), f"{where}: key '{key}'")
        for name in listed:
            if name not in cluster_instances:
                raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return listed

    if kind == "change-group":
        targets = _strs(_key(req, "target_groups", where), f"{where}: key 'target_groups'")
        known = set(groups) | {g.name for g in groups.values()}
        for target in targets:
            if target not in known:
                raise MalformedRequest(f"Wrong number of elems found with name {target}")
        return ChangeGroupRequest(instances=names("instances"), target_groups=targets)
    if kind == "node-evacuate":
        mode = _str(_key(req, "evac_mode", where), f"{where}: key 'evac_mode'")
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
        items = _list(_key(req, "instances", where), f"{where}: key 'instances'")
        return MultiAllocateRequest(
            instances=tuple(
                _allocate(_dict(i, f"{where}[{n}]"), where) for n, i in enumerate(items)
            )
        )
    if kind == "relocate":
        name = _str(_key(req, "name", where), f"{where}: key 'name'")
        _int(_key(req, "required_nodes", where), f"{where}: key 'required_nodes'")
        _int(_key(req, "disk_space_total", where), f"{where}: key 'disk_space_total'")
        if name not in cluster_instances:
            raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return RelocateRequest(
            name=name,
            relocate_from=_strs(_key(req, "relocate_from", where), f"{where}: key 'relocate_from'"),
        )
    if kind == "allocate-secondary":
        name = _str(_key(req, "name", where), f"{where}: key 'name'")
        if name not in cluster_instances:
            raise MalformedRequest(f"Wrong number of elems found with name {name}")
        return AllocateSecondaryRequest(name=name)
    raise MalformedRequest(f"Invalid request type '{kind}'")


def _allocate(req: dict[str, Any], where: str) -> AllocateRequest:
    _key(req, "disks", where)
    restrict = req.get("restrict-to-nodes")
    return AllocateRequest(
        spec=_spec(req, where),
        required_nodes=_int(_key(req, "required_nodes", where), f"{where}: key 'required_nodes'"),
        group_name=None if req.get("group_name") is None else str(req["group_name"]),
        restrict_to_nodes=None if restrict is None else _strs(restrict, f"{where}: restrict"),
    )


def parse_request(data: Mapping[str, Any], static_kvm_node_memory: int = 4096) -> ClusterData:
    """Build the typed model of an iallocator request dict.

    Args:
        data: the decoded JSON object Ganeti wrote.
        static_kvm_node_memory: hail's override of ``reserved_memory`` when the
            first enabled hypervisor is kvm (0 turns it off).

    Returns:
        The cluster and the request, in file order.

    Raises:
        MalformedRequest: a key is missing or has the wrong type, or a name
            does not exist.
    """
    top = _dict(dict(data), "invalid iallocator message")
    request_value = _key(top, "request", "invalid iallocator message")
    _dict(request_value, "invalid iallocator message: key 'request'")
    hypervisors = _strs(_opt(top, "enabled_hypervisors", []), "enabled_hypervisors")
    hypervisor = hypervisors[0] if hypervisors else None
    kvm_memory = static_kvm_node_memory if hypervisor == "kvm" and static_kvm_node_memory else None
    groups_raw = _dict(_key(top, "nodegroups", "invalid iallocator message"), "nodegroups")
    groups = {uuid: _group(uuid, value) for uuid, value in groups_raw.items()}
    nodes_raw = _dict(_key(top, "nodes", "invalid iallocator message"), "nodes")
    nodes = [_node(name, value, groups, kvm_memory) for name, value in nodes_raw.items()]
    node_index = {node.name: i for i, node in enumerate(nodes)}
    inst_raw = _dict(_key(top, "instances", "invalid iallocator message"), "instances")
    instances = {name: _instance(name, value, node_index) for name, value in inst_raw.items()}
    return ClusterData(
        cluster_tags=_strs(_opt(top, "cluster_tags", []), "cluster_tags"),
        hypervisor=hypervisor,
        groups=tuple(groups.values()),
        nodes=tuple(nodes),
        instances=tuple(instances.values()),
        request=_request(request_value, instances, groups),
    )


def format_answer(success: bool, info: str, result: Any) -> str:
    """Serialise an answer exactly as hail does: compact, keys in fixed order."""
    prefix = "Request successful: " if success else "Request failed: "
    body = {"success": success, "info": prefix + info, "result": result if success else []}
    return json.dumps(body, separators=(",", ":"))
