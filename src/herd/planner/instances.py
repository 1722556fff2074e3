"""Reading instances (existing ones and allocation specs) from a request."""

from __future__ import annotations

from collections.abc import Mapping

from herd.errors import MalformedRequest
from herd.planner.fields import (
    as_bool,
    as_dict,
    as_int,
    as_list,
    as_str,
    as_strs,
    fail,
    optional,
    require,
)
from herd.planner.model import AdminState, DiskTemplate, Instance, InstanceSpec


def read_spec(value: object, where: str, name: str | None = None) -> InstanceSpec:
    inst = as_dict(value, where)
    if name is None:
        name = as_str(require(inst, "name", where), f"{where}.name")
    template_name = as_str(require(inst, "disk_template", where), f"{where}.disk_template")
    try:
        template = DiskTemplate(template_name)
    except ValueError:
        raise fail(f"{where}.disk_template", f"unknown disk template {template_name!r}") from None
    disks = [as_dict(d, f"{where}.disks[{i}]") for i, d in enumerate(as_list(inst["disks"], where))]
    sizes = tuple(
        as_int(require(d, "size", f"{where}.disks[{i}]"), where) for i, d in enumerate(disks)
    )
    spindles: int | None = 0
    for i, disk in enumerate(disks):
        if disk.get("spindles") is None:
            spindles = None
        elif spindles is not None:
            spindles += as_int(disk["spindles"], f"{where}.disks[{i}].spindles")
    state_name = as_str(optional(inst, "admin_state", "up"), f"{where}.admin_state")
    try:
        state = AdminState(state_name)
    except ValueError:
        raise fail(f"{where}.admin_state", f"invalid value {state_name!r}") from None
    nics = as_list(require(inst, "nics", where), f"{where}.nics")
    networks = tuple(
        str(nic["network"]) for nic in nics if isinstance(nic, dict) and nic.get("network")
    )
    return InstanceSpec(
        name=name,
        memory=as_int(require(inst, "memory", where), f"{where}.memory"),
        vcpus=as_int(require(inst, "vcpus", where), f"{where}.vcpus"),
        disk_template=template,
        disk_space_total=as_int(
            require(inst, "disk_space_total", where), f"{where}.disk_space_total"
        ),
        disk_sizes=sizes,
        disk_spindles=spindles,
        spindle_use=as_int(require(inst, "spindle_use", where), f"{where}.spindle_use"),
        nic_count=len(nics),
        tags=as_strs(require(inst, "tags", where), f"{where}.tags"),
        admin_state=state,
        forthcoming=as_bool(optional(inst, "forthcoming", False), f"{where}.forthcoming"),
        networks=networks,
    )


_TEMPLATES = {t.value: t for t in DiskTemplate}
_STATES = {s.value: s for s in AdminState}


def _is_int(value: object) -> bool:
    return type(value) is int


def _instance_fast(name: str, inst: object, node_names: Mapping[str, int]) -> Instance | None:
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


def read_instance(name: str, value: object, node_names: Mapping[str, int]) -> Instance:
    fast = _instance_fast(name, value, node_names)
    if fast is not None:
        return fast
    where = f"instances['{name}']"
    inst = as_dict(value, where)
    require(inst, "disks", where)
    nodes = as_strs(require(inst, "nodes", where), f"{where}.nodes")
    if not nodes:
        raise fail(f"{where}.nodes", "empty node list")
    for node in nodes:
        if node not in node_names:
            raise MalformedRequest(f"Wrong number of elems found with name {node}")
    return Instance(spec=read_spec(inst, where, name), nodes=nodes)
