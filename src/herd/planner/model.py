"""Typed model of an iallocator request (Ganeti protocol version 2).

The codec turns the JSON dict into these frozen dataclasses; the planner
never looks at raw JSON. Names and units follow Ganeti: memory in MiB, disk
in MiB, nodes numbered in file order (file order decides tie-breaks in hail).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


class DiskTemplate(StrEnum):
    DRBD = "drbd"
    PLAIN = "plain"
    FILE = "file"
    SHAREDFILE = "sharedfile"
    BLOCKDEV = "blockdev"
    RBD = "rbd"
    EXT = "ext"
    GLUSTER = "gluster"
    DISKLESS = "diskless"

    @property
    def is_drbd(self) -> bool:
        return self is DiskTemplate.DRBD

    @property
    def uses_local_disk(self) -> bool:
        """Whether the instance's disks consume the node's own volume group."""
        return self in (DiskTemplate.DRBD, DiskTemplate.PLAIN)

    @property
    def is_externally_mirrored(self) -> bool:
        """Shared storage (and diskless): any node of the group can run it."""
        return self in SHARED_TEMPLATES

    @property
    def is_movable(self) -> bool:
        return self.is_drbd or self.is_externally_mirrored


SHARED_TEMPLATES = frozenset(
    {
        DiskTemplate.SHAREDFILE,
        DiskTemplate.BLOCKDEV,
        DiskTemplate.RBD,
        DiskTemplate.EXT,
        DiskTemplate.GLUSTER,
        DiskTemplate.DISKLESS,
    }
)


class AllocPolicy(IntEnum):
    """Group allocation policy; the integer value is the preference rank."""

    PREFERRED = 0
    LAST_RESORT = 1
    UNALLOCABLE = 2

    @property
    def wire_name(self) -> str:
        return self.name.lower()

    @classmethod
    def from_wire(cls, value: str) -> AllocPolicy:
        return cls[value.upper()]


class AdminState(StrEnum):
    UP = "up"
    DOWN = "down"
    OFFLINE = "offline"


class EvacMode(StrEnum):
    PRIMARY_ONLY = "primary-only"
    SECONDARY_ONLY = "secondary-only"
    ALL = "all"


class RequestType(StrEnum):
    ALLOCATE = "allocate"
    MULTI_ALLOCATE = "multi-allocate"
    RELOCATE = "relocate"
    ALLOCATE_SECONDARY = "allocate-secondary"
    CHANGE_GROUP = "change-group"
    NODE_EVACUATE = "node-evacuate"


@dataclass(frozen=True)
class ISpec:
    """One instance-spec bound of an ipolicy (absent keys are unconstrained)."""

    memory_size: int | None = None
    cpu_count: int | None = None
    disk_size: int | None = None
    disk_count: int | None = None
    nic_count: int | None = None
    spindle_use: int | None = None


@dataclass(frozen=True)
class IPolicy:
    minmax: tuple[tuple[ISpec, ISpec], ...] = ()
    disk_templates: tuple[str, ...] = ()
    vcpu_ratio: float = 4.0
    spindle_ratio: float = 32.0


@dataclass(frozen=True)
class Group:
    uuid: str
    name: str
    alloc_policy: AllocPolicy
    ipolicy: IPolicy
    networks: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Node:
    name: str
    group: str
    offline: bool
    drained: bool
    vm_capable: bool
    master_capable: bool
    tags: tuple[str, ...]
    total_memory: float
    reserved_memory: float
    free_memory: float
    total_disk: float
    free_disk: float
    total_cpus: float
    reserved_cpus: float
    spindle_count: float
    total_spindles: float
    free_spindles: float
    exclusive_storage: bool

    @property
    def is_offline(self) -> bool:
        """hail treats offline, drained and non-vm-capable nodes alike."""
        return self.offline or self.drained or not self.vm_capable


@dataclass(frozen=True)
class InstanceSpec:
    """Resource needs of an instance, existing or about to be allocated."""

    name: str
    memory: int
    vcpus: int
    disk_template: DiskTemplate
    disk_space_total: int
    disk_sizes: tuple[int, ...]
    disk_spindles: int | None
    spindle_use: int
    nic_count: int
    tags: tuple[str, ...] = ()
    admin_state: AdminState = AdminState.UP
    forthcoming: bool = False
    networks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Instance:
    spec: InstanceSpec
    nodes: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class ChangeGroupRequest:
    instances: tuple[str, ...]
    target_groups: tuple[str, ...]
    type: RequestType = RequestType.CHANGE_GROUP


@dataclass(frozen=True)
class NodeEvacuateRequest:
    instances: tuple[str, ...]
    evac_mode: EvacMode
    type: RequestType = RequestType.NODE_EVACUATE


@dataclass(frozen=True)
class AllocateRequest:
    spec: InstanceSpec
    required_nodes: int
    group_name: str | None = None
    restrict_to_nodes: tuple[str, ...] | None = None
    type: RequestType = RequestType.ALLOCATE


@dataclass(frozen=True)
class MultiAllocateRequest:
    instances: tuple[AllocateRequest, ...]
    type: RequestType = RequestType.MULTI_ALLOCATE


@dataclass(frozen=True)
class RelocateRequest:
    name: str
    relocate_from: tuple[str, ...]
    type: RequestType = RequestType.RELOCATE


@dataclass(frozen=True)
class AllocateSecondaryRequest:
    name: str
    type: RequestType = RequestType.ALLOCATE_SECONDARY


Request = (
    ChangeGroupRequest
    | NodeEvacuateRequest
    | AllocateRequest
    | MultiAllocateRequest
    | RelocateRequest
    | AllocateSecondaryRequest
)


@dataclass(frozen=True)
class ClusterData:
    """Everything the request file describes, in file order."""

    cluster_tags: tuple[str, ...]
    hypervisor: str | None
    groups: tuple[Group, ...]
    nodes: tuple[Node, ...]
    instances: tuple[Instance, ...]
    request: Request


@dataclass(frozen=True)
class PlannerOptions:
    """Knobs taken from the command line (hail's option names).

    Attributes:
        ignore_soft_errors: skip soft checks (exclusion tags, N+1, cpu ratio, ...)
            for node-evacuate, as ``gnt-node evacuate --ignore-soft-errors``.
        static_kvm_node_memory: hail's KVM override of ``reserved_memory``.
        max_resyncs_per_node: cap on DRBD resyncs that may run at once on a node.
        restrict_to_nodes: allocation may only use these nodes (None = all).
    """

    ignore_soft_errors: bool = False
    no_capacity_checks: bool = False
    static_kvm_node_memory: int = 4096
    max_resyncs_per_node: int = 2
    restrict_to_nodes: frozenset[str] | None = None
    extra: dict[str, str] = field(default_factory=dict)
