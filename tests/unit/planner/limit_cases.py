"""One small cluster per per-node limit, at the step where Ganeti checks it.

Each case is a node-evacuate request whose outcome is decided by one limit,
with what Ganeti's model (hail) does: the instance moves or fails with a
failure mode; whether ``--ignore-soft-errors`` changes that (soft limits) or
not (hard limits); and a hand-written job that goes through the refused
state anyway, for ``check`` to reject. The unit tests assert herd's answers;
the functional tests run the same cases through the real hail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .factory import IPOLICY, cluster, instance

NODES = ["n1", "n2", "n3", "n4"]


@dataclass(frozen=True)
class LimitCase:
    """A request and what Ganeti's model makes of it.

    Attributes:
        raw: the request.
        moved: instances that move, with their final nodes.
        failed: instances that fail, with the failure mode in the reason.
        hard: whether the failure stays with ``--ignore-soft-errors``.
        forced: a job that passes through the refused state.
        refusal: the text ``check`` reports for that job.
    """

    raw: dict[str, Any]
    moved: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    hard: bool = True
    forced: list[dict[str, Any]] = field(default_factory=list)
    refusal: str = ""


def _evacuate(
    instances: dict[str, dict[str, Any]],
    mode: str,
    wanted: list[str],
    overrides: dict[str, dict[str, Any]] | None = None,
    nodes: list[str] | None = None,
) -> dict[str, Any]:
    request = {"type": "node-evacuate", "instances": wanted, "evac_mode": mode}
    return cluster({"g1": nodes or NODES}, instances, request, overrides)


def _offline(raw: dict[str, Any], name: str) -> None:
    body = raw["nodes"][name]
    body["offline"] = True
    for key in [k for k in body if k.startswith(("total_", "free_", "reserved_"))]:
        del body[key]


def _fill(node: str, memory: int = 1024, **extra: Any) -> dict[str, Any]:
    return instance("plain", [node], memory=memory, **extra)


def _migrate(name: str, target: str | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"OP_ID": "OP_INSTANCE_MIGRATE", "instance_name": name}
    return op | ({"target_node": target} if target else {})


def _replace(name: str, node: str) -> dict[str, Any]:
    return {"OP_ID": "OP_INSTANCE_REPLACE_DISKS", "instance_name": name, "remote_node": node}


def memory_new_primary() -> LimitCase:
    """Hard: a new primary needs free memory, even when the source is offline."""
    fills = {f"f{n}": _fill(n, memory=32768) for n in ("n2", "n3", "n4")}
    raw = _evacuate({"x": instance("rbd", ["n1"]), **fills}, "primary-only", ["x"])
    _offline(raw, "n1")
    return LimitCase(
        raw,
        failed={"x": "FailMem"},
        forced=[_migrate("x", "n2")],
        refusal="n2 as the new primary: FailMem (hard limit)",
    )


def memory_kept_primary() -> LimitCase:
    """Hard: replace-disks re-adds the primary, which needs free memory left."""
    instances = {"x": instance("drbd", ["n1", "n2"]), "f": _fill("n1", memory=31744)}
    raw = _evacuate(instances, "secondary-only", ["x"])
    return LimitCase(
        raw,
        failed={"x": "FailMem"},
        forced=[_replace("x", "n3")],
        refusal="re-adding the primary n1: FailMem (hard limit)",
    )


def memory_secondary(state: str = "up") -> LimitCase:
    """Soft: a secondary needs more free memory than the instance (hail's
    forthcoming memory also counts the primaries that are down)."""
    instances = {
        "x": instance("drbd", ["n1", "n2"], memory=4096),
        "f3": _fill("n3", memory=30000, admin_state=state),
        "f4": _fill("n4", memory=30000, admin_state=state),
    }
    raw = _evacuate(instances, "secondary-only", ["x"])
    return LimitCase(
        raw,
        failed={"x": "FailMem"},
        hard=False,
        forced=[_replace("x", "n3")],
        refusal="n3 as the new secondary: FailMem (soft limit)",
    )


def n1_reservation() -> LimitCase:
    """Soft: a secondary may not become N+1-failing; one that already fails may."""
    instances = {
        "x": instance("drbd", ["n1", "n2"], memory=8192),
        "y": instance("drbd", ["n1", "n3"], memory=8192),
        "w": instance("drbd", ["n3", "n4"], memory=16000),
        "f3": _fill("n3", memory=4000),
        "f4": _fill("n4", memory=20000),
    }
    raw = _evacuate(instances, "secondary-only", ["x"])
    return LimitCase(
        raw,
        moved={"x": ["n1", "n4"]},
        hard=False,
        forced=[_replace("x", "n3")],
        refusal="n3 as the new secondary: FailMem (soft limit)",
    )


def disk() -> LimitCase:
    """Hard: a secondary needs the instance's disk free."""
    instances = {
        "x": instance("drbd", ["n1", "n2"], disk=50_000),
        "f3": _fill("n3", disk=960_000),
        "f4": _fill("n4", disk=960_000),
    }
    raw = _evacuate(instances, "secondary-only", ["x"])
    return LimitCase(
        raw,
        failed={"x": "FailDisk"},
        forced=[_replace("x", "n3")],
        refusal="n3 as the new secondary: FailDisk (hard limit)",
    )


def vcpu_ratio() -> LimitCase:
    """Soft: a node over the vcpu ratio refuses a new primary, even one that
    adds no vcpus (admin offline)."""
    fills = {f"f{n}": _fill(n, vcpus=5) for n in ("n2", "n3", "n4")}
    overrides = {n: {"total_cpus": 4} for n in NODES}
    x = instance("rbd", ["n1"], admin_state="offline")
    raw = _evacuate({"x": x, **fills}, "primary-only", ["x"], overrides)
    raw["nodegroups"]["g1"]["ipolicy"] = {**IPOLICY, "vcpu-ratio": 1.0}
    return LimitCase(
        raw,
        failed={"x": "FailCPU"},
        hard=False,
        forced=[_migrate("x", "n2")],
        refusal="n2 as the new primary: FailCPU (soft limit)",
    )


def vcpu_ratio_secondary() -> LimitCase:
    """None: secondaries are not held to the vcpu ratio."""
    fills = {f"f{n}": _fill(n, vcpus=5) for n in ("n3", "n4")}
    overrides = {n: {"total_cpus": 4} for n in NODES}
    raw = _evacuate(
        {"x": instance("drbd", ["n1", "n2"]), **fills}, "secondary-only", ["x"], overrides
    )
    raw["nodegroups"]["g1"]["ipolicy"] = {**IPOLICY, "vcpu-ratio": 1.0}
    return LimitCase(raw, moved={"x": ["n1", "n4"]}, hard=False)


def zero_cpus() -> LimitCase:
    """Soft: a node that reports 0 CPUs refuses a new primary with vcpus (hail's ratio is
    infinite), whatever the vcpu ratio."""
    overrides = {n: {"total_cpus": 0} for n in ("n2", "n3", "n4")}
    raw = _evacuate({"x": instance("rbd", ["n1"])}, "primary-only", ["x"], overrides)
    return LimitCase(
        raw,
        failed={"x": "FailCPU"},
        hard=False,
        forced=[_migrate("x", "n2")],
        refusal="n2 as the new primary: FailCPU (soft limit)",
    )


def spindles_old_primary() -> LimitCase:
    """Soft: the old primary, over its spindle limit, may not take the
    secondary back in a failover, though its load does not grow."""
    fills = {f"f{k}": _fill("n1") for k in range(4)}
    raw = _evacuate({"x": instance("drbd", ["n1", "n2"]), **fills}, "primary-only", ["x"])
    raw["nodegroups"]["g1"]["ipolicy"] = {**IPOLICY, "spindle-ratio": 4.0}
    return LimitCase(
        raw,
        failed={"x": "FailDisk"},
        hard=False,
        forced=[_migrate("x")],
        refusal="the old primary n1 taking the secondary back: FailDisk (soft limit)",
    )


def instance_count() -> LimitCase:
    """None: Ganeti has no per-node instance limit (the count is only scored)."""
    many = {f"d{k:02d}": instance("diskless", ["n2"], memory=128) for k in range(50)}
    raw = _evacuate(
        {"x": instance("diskless", ["n1"]), **many}, "primary-only", ["x"], nodes=["n1", "n2"]
    )
    return LimitCase(raw, moved={"x": ["n2"]}, hard=False)


def exclusive_storage() -> LimitCase:
    """Hard: with exclusive storage a secondary needs the disks' spindles free."""
    overrides = {
        n: {
            "ndparams": {"spindle_count": 1, "exclusive_storage": True},
            "total_spindles": 4,
            "free_spindles": 1 if n in ("n3", "n4") else 2,
        }
        for n in NODES
    }
    x = instance("drbd", ["n1", "n2"], disks=[{"size": 1024, "mode": "rw", "spindles": 2}])
    raw = _evacuate({"x": x}, "secondary-only", ["x"], overrides)
    return LimitCase(
        raw,
        failed={"x": "FailSpindles"},
        forced=[_replace("x", "n3")],
        refusal="n3 as the new secondary: FailSpindles (hard limit)",
    )


def exclusive_storage_kept_primary() -> LimitCase:
    """Hard: an over-committed exclusive-storage primary refuses the re-add."""
    case = exclusive_storage()
    raw = case.raw
    raw["nodes"]["n1"]["free_spindles"] = -1
    for name in ("n3", "n4"):
        raw["nodes"][name]["free_spindles"] = 4
    return LimitCase(
        raw,
        failed={"x": "FailSpindles"},
        forced=[_replace("x", "n3")],
        refusal="re-adding the primary n1: FailSpindles (hard limit)",
    )


def migration_tags() -> LimitCase:
    """Always: migration tags apply even when the source is offline."""
    overrides = {"n1": {"tags": ["zone:a"]}, "n2": {"tags": ["zone:b"]}}
    raw = _evacuate({"x": instance("rbd", ["n1"])}, "primary-only", ["x"], overrides, ["n1", "n2"])
    raw["cluster_tags"] = ["htools:migration:zone"]
    _offline(raw, "n1")
    raw["nodes"]["n1"]["tags"] = ["zone:a"]
    return LimitCase(
        raw,
        failed={"x": "FailMig"},
        forced=[_migrate("x", "n2")],
        refusal="migration tags towards n2: FailMig (hard limit)",
    )


CASES: dict[str, Callable[[], LimitCase]] = {
    "memory-new-primary": memory_new_primary,
    "memory-kept-primary": memory_kept_primary,
    "memory-secondary": memory_secondary,
    "memory-forthcoming-down": lambda: memory_secondary("down"),
    "n1-reservation": n1_reservation,
    "disk": disk,
    "vcpu-ratio": vcpu_ratio,
    "vcpu-ratio-secondary": vcpu_ratio_secondary,
    "zero-cpus": zero_cpus,
    "spindles-old-primary": spindles_old_primary,
    "instance-count": instance_count,
    "exclusive-storage": exclusive_storage,
    "exclusive-storage-kept-primary": exclusive_storage_kept_primary,
    "migration-tags": migration_tags,
}
