"""Small hand-made iallocator requests for unit tests."""

from __future__ import annotations

from typing import Any

IPOLICY: dict[str, Any] = {
    "minmax": [
        {
            "min": {
                "memory-size": 128,
                "cpu-count": 1,
                "disk-size": 128,
                "disk-count": 1,
                "nic-count": 1,
                "spindle-use": 1,
            },
            "max": {
                "memory-size": 65536,
                "cpu-count": 16,
                "disk-size": 1048576,
                "disk-count": 16,
                "nic-count": 8,
                "spindle-use": 8,
            },
        }
    ],
    # A complete std spec: hail refuses a request without one.
    "std": {
        "memory-size": 128,
        "cpu-count": 1,
        "disk-size": 1024,
        "disk-count": 1,
        "nic-count": 1,
        "spindle-use": 1,
    },
    "disk-templates": [
        "drbd",
        "plain",
        "file",
        "sharedfile",
        "blockdev",
        "rbd",
        "ext",
        "gluster",
        "diskless",
    ],
    "vcpu-ratio": 4.0,
    "spindle-ratio": 32.0,
}


def node(group: str, memory: int = 32768, disk: int = 1_000_000, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "group": group,
        "offline": False,
        "drained": False,
        "vm_capable": True,
        "master_capable": True,
        "tags": [],
        "ndparams": {"spindle_count": 1, "exclusive_storage": False},
        "total_memory": memory,
        "reserved_memory": 0,
        "free_memory": memory,
        "total_disk": disk,
        "free_disk": disk,
        "total_cpus": 16,
        "reserved_cpus": 0,
        "total_spindles": 12,
        "free_spindles": 12,
    }
    body.update(extra)
    return body


def instance(
    template: str, nodes: list[str], memory: int = 1024, disk: int = 1024, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "tags": [],
        "admin_state": "up",
        "vcpus": 1,
        "memory": memory,
        "spindle_use": 1,
        "nodes": nodes,
        "nics": [{"mac": "aa"}],
        "disks": [{"size": disk, "mode": "rw"}],
        "disk_template": template,
        "disk_space_total": disk + (128 if template == "drbd" else 0),
    }
    body.update(extra)
    return body


def cluster(
    groups: dict[str, list[str]],
    instances: dict[str, dict[str, Any]],
    request: dict[str, Any],
    node_overrides: dict[str, dict[str, Any]] | None = None,
    cluster_tags: list[str] | None = None,
) -> dict[str, Any]:
    """Build a request whose free memory/disk match the placements."""
    nodes = {}
    for uuid, names in groups.items():
        for name in names:
            nodes[name] = node(uuid, **(node_overrides or {}).get(name, {}))
    for inst in instances.values():
        pri = nodes[inst["nodes"][0]]
        if inst["admin_state"] == "up":
            pri["free_memory"] -= inst["memory"]
        if inst["disk_template"] in ("drbd", "plain"):
            for name in inst["nodes"]:
                nodes[name]["free_disk"] -= inst["disk_space_total"]
    return {
        "version": 2,
        "cluster_name": "c",
        "cluster_tags": cluster_tags or [],
        "enabled_hypervisors": ["xen-pvm"],
        "ipolicy": IPOLICY,
        "nodegroups": {
            uuid: {
                "name": f"name-{uuid}",
                "alloc_policy": "preferred",
                "networks": [],
                "ipolicy": IPOLICY,
                "tags": [],
            }
            for uuid in groups
        },
        "nodes": nodes,
        "instances": instances,
        "request": request,
    }


ALL_TEMPLATES = [
    "drbd",
    "plain",
    "file",
    "sharedfile",
    "blockdev",
    "rbd",
    "ext",
    "gluster",
    "diskless",
]


def template_cluster(request: dict[str, Any]) -> dict[str, Any]:
    """One instance per template on n1 (DRBD on n1/n2), two groups of four nodes."""
    instances = {}
    for template in ALL_TEMPLATES:
        nodes = ["n1", "n2"] if template == "drbd" else ["n1"]
        instances[f"i-{template}"] = instance(template, nodes)
    return cluster(
        {"g1": ["n1", "n2", "n3", "n4"], "g2": ["m1", "m2", "m3", "m4"]}, instances, request
    )
