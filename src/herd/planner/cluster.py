"""Mutable cluster state: numpy arrays of node resources plus placements.

The arrays follow hail's node model (ganeti.md 4.1): memory, disk, cpu and
spindle figures per node, the N+1 reservation ``r_mem`` derived from the
DRBD peers, and tag bookkeeping. Planning works on copies; the request data
itself is never changed.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from herd.planner.model import AdminState, ClusterData, DiskTemplate, InstanceSpec

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NO_NODE = -1
DENSE_PEER_LIMIT = 4096


@dataclass(frozen=True)
class TagRules:
    """Tag prefixes taken from the cluster tags (``htools:...``)."""

    exclusion_prefixes: tuple[str, ...]
    location_prefixes: tuple[str, ...]
    desired_location_prefixes: tuple[str, ...]
    migration_prefixes: tuple[str, ...]
    allowed_migrations: frozenset[tuple[str, str]]

    @classmethod
    def from_cluster_tags(cls, tags: tuple[str, ...]) -> TagRules:
        def values(prefix: str) -> tuple[str, ...]:
            return tuple(t[len(prefix) :] for t in tags if t.startswith(prefix))

        allowed = set()
        for rule in values("htools:allowmigration:"):
            source, sep, target = rule.partition("::")
            if sep:
                allowed.add((source, target))
        return cls(
            exclusion_prefixes=values("htools:iextags:"),
            location_prefixes=values("htools:nlocation:"),
            desired_location_prefixes=values("htools:desiredlocation:"),
            migration_prefixes=values("htools:migration:"),
            allowed_migrations=frozenset(allowed),
        )

    def exclusion_tags(self, tags: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(t for t in tags if any(t.startswith(p) for p in self.exclusion_prefixes))

    def location_tags(self, tags: tuple[str, ...]) -> frozenset[str]:
        return frozenset(
            t for t in tags if any(t.startswith(p + ":") for p in self.location_prefixes)
        )

    def desired_locations(self, tags: tuple[str, ...]) -> frozenset[str]:
        return frozenset(
            t for t in tags if any(t.startswith(p) for p in self.desired_location_prefixes)
        )

    def migration_tags(self, tags: tuple[str, ...]) -> frozenset[str]:
        return frozenset(
            t for t in tags if any(t.startswith(p + ":") for p in self.migration_prefixes)
        )


def uses_memory(spec: InstanceSpec) -> bool:
    """Admin-up, non-forthcoming instances hold memory on their primary."""
    return spec.admin_state is AdminState.UP and not spec.forthcoming


def reserves_memory(spec: InstanceSpec) -> bool:
    """Instances that a failover would start count in the N+1 reservation."""
    return spec.admin_state is not AdminState.OFFLINE and spec.disk_template is DiskTemplate.DRBD


class ClusterState:
    """Node resources and instance placements, updated in place by moves."""

    def __init__(self, data: ClusterData) -> None:
        self.data = data
        self.rules = TagRules.from_cluster_tags(data.cluster_tags)
        self.group_uuids = [g.uuid for g in data.groups]
        self.groups = list(data.groups)
        group_index = {g.uuid: i for i, g in enumerate(data.groups)}
        nodes = data.nodes
        self.node_names = [n.name for n in nodes]
        self.node_index = {n.name: i for i, n in enumerate(nodes)}
        count = len(nodes)

        def arr(values: list[float]) -> FloatArray:
            return np.asarray(values, dtype=np.float64).reshape(count)

        self.group = np.asarray([group_index[n.group] for n in nodes], dtype=np.int64)
        self.offline = np.asarray([n.is_offline for n in nodes], dtype=np.bool_).reshape(count)
        self.exclusive = np.asarray([n.exclusive_storage for n in nodes], dtype=np.bool_)
        self.exclusive = self.exclusive.reshape(count)
        self.t_mem = arr([n.total_memory for n in nodes])
        self.n_mem = arr([n.reserved_memory for n in nodes])
        self.t_dsk = arr([n.total_disk for n in nodes])
        self.f_dsk = arr([n.free_disk for n in nodes])
        self.t_cpu = arr([n.total_cpus for n in nodes])
        self.u_cpu = arr([n.reserved_cpus for n in nodes])
        self.t_spindles = arr([n.total_spindles for n in nodes])
        self.f_spindles = arr([n.free_spindles for n in nodes])
        ratios = [data.groups[group_index[n.group]].ipolicy for n in nodes]
        self.vcpu_ratio = arr([p.vcpu_ratio for p in ratios])
        self.hi_spindles = arr(
            [p.spindle_ratio * n.spindle_count for p, n in zip(ratios, nodes, strict=True)]
        )
        self.i_mem = np.zeros(count)
        self.all_mem = np.zeros(count)
        self.inst_spindles = np.zeros(count)
        self.pcnt = np.zeros(count)
        self.scnt = np.zeros(count)
        self.r_mem = np.zeros(count)
        self.loc_cost = np.zeros(count)
        self.peers: list[dict[int, float]] = [{} for _ in range(count)]
        # Dense copy of ``peers`` (secondary x primary) for vectorised pair
        # search; skipped on huge clusters where it would not fit comfortably.
        self.peer_matrix: npt.NDArray[np.float32] | None = (
            np.zeros((count, count), dtype=np.float32) if count <= DENSE_PEER_LIMIT else None
        )
        self.tag_score = np.zeros(count)
        self.excl_counts: list[Counter[str]] = [Counter() for _ in range(count)]
        self.node_tags = [frozenset(n.tags) for n in nodes]
        self.node_locations = [self.rules.location_tags(n.tags) for n in nodes]
        self.node_migration_tags = [self.rules.migration_tags(n.tags) for n in nodes]

        self.specs: list[InstanceSpec] = [inst.spec for inst in data.instances]
        self.inst_index = {inst.name: i for i, inst in enumerate(data.instances)}
        self.pri = np.full(len(self.specs), NO_NODE, dtype=np.int64)
        self.sec = np.full(len(self.specs), NO_NODE, dtype=np.int64)
        self.inst_excl = [self.rules.exclusion_tags(s.tags) for s in self.specs]
        self.inst_desired = [self.rules.desired_locations(s.tags) for s in self.specs]
        self.primaries: list[set[int]] = [set() for _ in range(count)]
        self.secondaries: list[set[int]] = [set() for _ in range(count)]
        self._load_placements()
        # Ganeti reports free disk and spindles with the existing instances
        # already taken off; attaching them above must not count them twice.
        self.f_dsk = arr([n.free_disk for n in nodes])
        self.f_spindles = arr([n.free_spindles for n in nodes])
        # hail freezes the memory it cannot account for at load time (xMem).
        reported_free = arr([n.free_memory for n in nodes])
        missing = (self.t_mem - self.n_mem - self.i_mem) - reported_free
        self.missing_mem = np.maximum(missing, 0.0)
        self.missing_mem[self.offline] = 0.0
        # hail's "forthcoming" free memory (fMemForth) starts from the reported
        # free memory and charges every primary, running or not.
        self.forth_offset = reported_free + self.i_mem

    def _secondary_of(self, nodes: tuple[str, ...]) -> int:
        return self.node_index[nodes[1]] if len(nodes) > 1 else NO_NODE

    def _load_placements(self) -> None:
        """Bulk equivalent of :meth:`attach` for every instance of the request."""
        instances = self.data.instances
        if not instances:
            return
        self.pri = np.asarray([self.node_index[x.nodes[0]] for x in instances], dtype=np.int64)
        self.sec = np.asarray([self._secondary_of(x.nodes) for x in instances], dtype=np.int64)
        specs = self.specs
        local = np.asarray([s.disk_template.uses_local_disk for s in specs], dtype=np.bool_)
        memory = np.asarray([s.memory if uses_memory(s) else 0 for s in specs], dtype=np.float64)
        all_memory = np.asarray([s.memory for s in specs], dtype=np.float64)
        vcpus = np.asarray(
            [s.vcpus if s.admin_state is not AdminState.OFFLINE else 0 for s in specs],
            dtype=np.float64,
        )
        spindles = np.where(local, [float(s.spindle_use) for s in specs], 0.0)
        has_sec = self.sec != NO_NODE
        np.add.at(self.i_mem, self.pri, memory)
        np.add.at(self.all_mem, self.pri, all_memory)
        np.add.at(self.u_cpu, self.pri, vcpus)
        np.add.at(self.inst_spindles, self.pri, spindles)
        np.add.at(self.inst_spindles, self.sec[has_sec], spindles[has_sec])
        np.add.at(self.pcnt, self.pri, 1.0)
        np.add.at(self.scnt, self.sec[has_sec], 1.0)
        locations = bool(self.rules.location_prefixes or self.rules.desired_location_prefixes)
        for i, (primary, secondary) in enumerate(
            zip(self.pri.tolist(), self.sec.tolist(), strict=True)
        ):
            self.primaries[primary].add(i)
            for tag in self.inst_excl[i]:
                if self.excl_counts[primary][tag] > 0:
                    self.tag_score[primary] += 1
                self.excl_counts[primary][tag] += 1
            if locations:
                self.loc_cost[primary] += self.location_cost(i, primary, secondary)
            if secondary != NO_NODE:
                self.secondaries[secondary].add(i)
                if reserves_memory(specs[i]):
                    peers = self.peers[secondary]
                    peers[primary] = peers.get(primary, 0.0) + specs[i].memory
        for node, peers in enumerate(self.peers):
            if peers:
                self._refresh_r_mem(node)
                if self.peer_matrix is not None:
                    for primary, amount in peers.items():
                        self.peer_matrix[node, primary] = amount

    def copy(self) -> ClusterState:
        """Independent copy for what-if planning (shares the frozen request)."""
        clone = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(clone, name, value.copy())
        clone.peers = [dict(p) for p in self.peers]
        clone.excl_counts = [Counter(c) for c in self.excl_counts]
        clone.primaries = [set(s) for s in self.primaries]
        clone.secondaries = [set(s) for s in self.secondaries]
        return clone

    @property
    def unallocated(self) -> FloatArray:
        """Free memory for new primaries: the smaller of recorded and reported."""
        result: FloatArray = self.t_mem - self.n_mem - self.i_mem - self.missing_mem
        return result

    @property
    def forth_free(self) -> FloatArray:
        """Free memory if every primary ran, down and offline ones too (fMemForth)."""
        result: FloatArray = self.forth_offset - self.all_mem
        return result

    @property
    def fail_n1(self) -> BoolArray:
        result: BoolArray = (self.unallocated <= self.r_mem) & ~self.offline
        return result

    def group_nodes(self, group: int) -> IntArray:
        result: IntArray = np.flatnonzero(self.group == group).astype(np.int64)
        return result

    def local_disk(self, i: int) -> float:
        spec = self.specs[i]
        return float(spec.disk_space_total) if spec.disk_template.uses_local_disk else 0.0

    def local_spindles(self, i: int) -> float:
        spec = self.specs[i]
        return float(spec.spindle_use) if spec.disk_template.uses_local_disk else 0.0

    def location_cost(self, i: int, primary: int, secondary: int) -> float:
        """Score points of a placement: shared failure domain, unmet desires."""
        cost = len(self.inst_desired[i] - self.node_tags[primary])
        if secondary != NO_NODE:
            cost += len(self.node_locations[primary] & self.node_locations[secondary])
        return float(cost)

    def _refresh_r_mem(self, node: int) -> None:
        self.r_mem[node] = max(self.peers[node].values(), default=0.0)

    def attach(self, i: int, primary: int, secondary: int) -> None:
        """Place instance ``i`` on ``primary`` (and ``secondary`` for DRBD)."""
        spec = self.specs[i]
        disk = self.local_disk(i)
        spindles = self.local_spindles(i)
        self.pri[i] = primary
        self.sec[i] = secondary
        self.primaries[primary].add(i)
        if uses_memory(spec):
            self.i_mem[primary] += spec.memory
        self.all_mem[primary] += spec.memory
        if spec.admin_state is not AdminState.OFFLINE:
            self.u_cpu[primary] += spec.vcpus
        self.f_dsk[primary] -= disk
        self.inst_spindles[primary] += spindles
        if self.exclusive[primary] and spec.disk_spindles:
            self.f_spindles[primary] -= spec.disk_spindles
        self.pcnt[primary] += 1
        for tag in self.inst_excl[i]:
            if self.excl_counts[primary][tag] > 0:
                self.tag_score[primary] += 1
            self.excl_counts[primary][tag] += 1
        self.loc_cost[primary] += self.location_cost(i, primary, secondary)
        if secondary != NO_NODE:
            self.secondaries[secondary].add(i)
            self.f_dsk[secondary] -= disk
            self.inst_spindles[secondary] += spindles
            if self.exclusive[secondary] and spec.disk_spindles:
                self.f_spindles[secondary] -= spec.disk_spindles
            self.scnt[secondary] += 1
            if reserves_memory(spec):
                peers = self.peers[secondary]
                peers[primary] = peers.get(primary, 0.0) + spec.memory
                if self.peer_matrix is not None:
                    self.peer_matrix[secondary, primary] = peers[primary]
                self._refresh_r_mem(secondary)

    def detach(self, i: int) -> tuple[int, int]:
        """Remove instance ``i`` from its nodes; returns the old (primary, secondary)."""
        spec = self.specs[i]
        primary, secondary = int(self.pri[i]), int(self.sec[i])
        disk = self.local_disk(i)
        spindles = self.local_spindles(i)
        self.primaries[primary].discard(i)
        if uses_memory(spec):
            self.i_mem[primary] -= spec.memory
        self.all_mem[primary] -= spec.memory
        if spec.admin_state is not AdminState.OFFLINE:
            self.u_cpu[primary] -= spec.vcpus
        self.f_dsk[primary] += disk
        self.inst_spindles[primary] -= spindles
        if self.exclusive[primary] and spec.disk_spindles:
            self.f_spindles[primary] += spec.disk_spindles
        self.pcnt[primary] -= 1
        for tag in self.inst_excl[i]:
            if self.excl_counts[primary][tag] > 1:
                self.tag_score[primary] -= 1
            self.excl_counts[primary][tag] -= 1
            if not self.excl_counts[primary][tag]:
                del self.excl_counts[primary][tag]
        self.loc_cost[primary] -= self.location_cost(i, primary, secondary)
        if secondary != NO_NODE:
            self.secondaries[secondary].discard(i)
            self.f_dsk[secondary] += disk
            self.inst_spindles[secondary] -= spindles
            if self.exclusive[secondary] and spec.disk_spindles:
                self.f_spindles[secondary] += spec.disk_spindles
            self.scnt[secondary] -= 1
            if reserves_memory(spec):
                peers = self.peers[secondary]
                left = peers.get(primary, 0.0) - spec.memory
                if left > 0:
                    peers[primary] = left
                else:
                    peers.pop(primary, None)
                if self.peer_matrix is not None:
                    self.peer_matrix[secondary, primary] = peers.get(primary, 0.0)
                self._refresh_r_mem(secondary)
        self.pri[i] = NO_NODE
        self.sec[i] = NO_NODE
        return primary, secondary

    def place(self, i: int, primary: int, secondary: int) -> None:
        """Move instance ``i`` to a new (primary, secondary) pair."""
        self.detach(i)
        self.attach(i, primary, secondary)

    def add_new_instance(self, spec: InstanceSpec) -> int:
        """Register an instance being allocated (not placed yet); returns its index."""
        self.specs.append(spec)
        self.inst_index[spec.name] = len(self.specs) - 1
        self.pri = np.append(self.pri, NO_NODE)
        self.sec = np.append(self.sec, NO_NODE)
        self.inst_excl.append(self.rules.exclusion_tags(spec.tags))
        self.inst_desired.append(self.rules.desired_locations(spec.tags))
        return len(self.specs) - 1

    def location_exclusion_score(self, nodes: IntArray) -> float:
        """Primaries sharing an exclusion tag inside one failure domain."""
        if not self.rules.location_prefixes or not self.rules.exclusion_prefixes:
            return 0.0
        counts: Counter[tuple[str, str]] = Counter()
        for node in nodes.tolist():
            for location in self.node_locations[node]:
                for tag, n in self.excl_counts[node].items():
                    counts[(location, tag)] += n
        return float(sum(n - 1 for n in counts.values() if n > 1))
