"""The ``sim`` driver: in-memory simulated servers for scale tests.

Servers are small slotted records in one dict, so 100,000 of them cost a few
tens of megabytes. Latency is slept outside the lock so that concurrent engine
workers overlap as they would against a real cloud; failures are drawn from a
random source that a profile can seed to make a run repeatable.

Failures can be injected: :meth:`SimDriver.break_node` makes a server report
unhealthy, :meth:`SimDriver.kill_node` makes it vanish ("die"). Both are
reported at once to listeners of watched servers (LIFECYCLE_EVENTS). REBOOT and
REBUILD are simulated in place: the server keeps its physical id and is healthy
again.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from herd.drivers.base import (
    CreatedResource,
    Driver,
    HealthReport,
    NodeRequest,
    ResourceEvent,
    ResourceRef,
)
from herd.drivers.operations import SIM_OPERATIONS, OperationSpec
from herd.drivers.sim_ops import SimOperationsMixin
from herd.drivers.sim_state import FileServers, MemoryServers, SimServer, SimServers
from herd.errors import DriverError, InvalidSpec
from herd.json_types import int_or_none, number_or_none, str_or_none

_DEFAULTS: dict[str, object] = {
    "create_latency": 0.0,
    "delete_latency": 0.0,
    "failure_rate": 0.0,
    "delete_failure_rate": 0.0,
    "zone": None,
    "region": None,
    "seed": None,
}


def _fail(key: str, reason: str) -> InvalidSpec:
    return InvalidSpec(f"properties.{key}: {reason}", field=f"properties.{key}")


def _number(key: str, value: object, upper: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= upper:
        raise _fail(key, f"'{value}' is not a number between 0 and {upper:g}")
    return float(value)


@dataclass(frozen=True)
class SimProps:
    """The validated ``herd.sim`` properties, typed (what create and delete read)."""

    create_latency: float
    delete_latency: float
    failure_rate: float
    delete_failure_rate: float
    zone: str | None
    region: str | None
    seed: int | None


def _sim_props(properties: Mapping[str, object]) -> SimProps:
    given = {**_DEFAULTS, **properties}
    return SimProps(
        create_latency=number_or_none(given, "create_latency") or 0.0,
        delete_latency=number_or_none(given, "delete_latency") or 0.0,
        failure_rate=number_or_none(given, "failure_rate") or 0.0,
        delete_failure_rate=number_or_none(given, "delete_failure_rate") or 0.0,
        zone=str_or_none(given, "zone"),
        region=str_or_none(given, "region"),
        seed=int_or_none(given, "seed"),
    )


class SimDriver(SimOperationsMixin, Driver):
    """Simulated servers held in memory; thread-safe."""

    profile_type = "herd.sim"
    versions = ("1.0",)
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2025.01"}]
    }
    properties_schema: ClassVar[dict[str, dict[str, object]]] = {
        "create_latency": {"type": "Number", "default": 0, "description": "Seconds per create."},
        "delete_latency": {"type": "Number", "default": 0, "description": "Seconds per delete."},
        "failure_rate": {"type": "Number", "default": 0, "description": "Create failure odds."},
        "delete_failure_rate": {"type": "Number", "default": 0, "description": "Delete odds."},
        "zone": {"type": "String", "description": "Zone when the placement names none."},
        "region": {"type": "String", "description": "Region when the placement names none."},
        "seed": {"type": "Integer", "description": "Seed of the failure random source."},
    }
    operations_schema: ClassVar[Mapping[str, OperationSpec]] = SIM_OPERATIONS

    supports_reboot = True
    supports_rebuild = True

    def __init__(
        self, *, sleep: Callable[[float], None] = time.sleep, state_file: Path | None = None
    ) -> None:
        """Create a simulated cloud: empty in memory, or the one a state file holds.

        Args:
            sleep: how latency is spent (injectable so tests can observe it).
            state_file: a SQLite file shared with every other process that names it
                (several engines on one data directory); None keeps servers in memory.
        """
        super().__init__()
        self._sleep = sleep
        self._watched: dict[str, str] = {}  # physical id -> node id
        self._servers: SimServers = (
            FileServers(state_file) if state_file is not None else MemoryServers()
        )
        #: guards ``_servers`` (every read and write of it, through ``_locked``), nothing else
        self._lock = threading.Lock()
        self._counter = itertools.count(1)
        self._prefix = f"sim-{uuid.uuid4().hex[:8]}-"
        self._random = random.Random()
        self._seeded: dict[int, random.Random] = {}

    @contextmanager
    def _locked(self) -> Iterator[SimServers]:
        """The servers, under this process's lock and one store transaction."""
        with self._lock, self._servers.transaction():
            yield self._servers

    def close(self) -> None:
        if isinstance(self._servers, FileServers):
            self._servers.close()
        super().close()

    @classmethod
    def validate_properties(cls, properties: Mapping[str, object]) -> dict[str, object]:
        """Return the properties with defaults filled in, or raise InvalidSpec naming the key."""
        if not isinstance(properties, Mapping):
            raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
        for key in properties:
            if key not in cls.properties_schema:
                raise _fail(str(key), f"Unrecognizable spec item '{key}'")
        given = {**_DEFAULTS, **{k: v for k, v in properties.items() if v is not None}}
        result: dict[str, object] = {
            "create_latency": _number("create_latency", given["create_latency"], 3600),
            "delete_latency": _number("delete_latency", given["delete_latency"], 3600),
            "failure_rate": _number("failure_rate", given["failure_rate"], 1),
            "delete_failure_rate": _number("delete_failure_rate", given["delete_failure_rate"], 1),
        }
        for key in ("zone", "region"):
            if given[key] is not None and not isinstance(given[key], str):
                raise _fail(key, f"'{given[key]}' is not a string")
            result[key] = given[key]
        seed = given["seed"]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise _fail("seed", f"'{seed}' is not a valid Integer")
        result["seed"] = seed
        return result

    def calls_are_quick(self, properties: Mapping[str, object]) -> bool:
        """Without latency a simulated create or delete is a dict update."""
        return not properties.get("create_latency") and not properties.get("delete_latency")

    def create(self, request: NodeRequest) -> CreatedResource:
        """Make a simulated server after ``create_latency``; may fail at ``failure_rate``."""
        props = _sim_props(request.properties)
        if props.create_latency:
            self._sleep(props.create_latency)
        with self._locked() as servers:
            return self._create_locked(servers, request, props)

    def _create_locked(
        self, servers: SimServers, request: NodeRequest, props: SimProps
    ) -> CreatedResource:
        zone = request.placement.get("zone") or props.zone
        region_name = request.placement.get("region_name") or props.region
        server = SimServer(request.node_id, zone, region_name)
        rate = props.failure_rate
        if rate and self._draw(props) < rate:
            raise DriverError(f"simulated create failure of node {request.node_id}")
        physical_id = f"{self._prefix}{next(self._counter)}"
        servers.put(physical_id, server)
        return CreatedResource(physical_id, server.data())

    def create_many(self, requests: Sequence[NodeRequest]) -> list[CreatedResource | Exception]:
        """Without latency, all in one transaction of the (possibly shared) server store."""
        if any(r.properties.get("create_latency") for r in requests):
            return super().create_many(requests)
        out: list[CreatedResource | Exception] = []
        with self._locked() as servers:
            for request in requests:
                try:
                    out.append(
                        self._create_locked(servers, request, _sim_props(request.properties))
                    )
                except DriverError as exc:
                    out.append(exc)
        return out

    def delete_many(self, refs: Sequence[ResourceRef]) -> list[Exception | None]:
        """Without latency, all in one transaction of the (possibly shared) server store."""
        if any(r.properties.get("delete_latency") for r in refs):
            return super().delete_many(refs)
        out: list[Exception | None] = []
        with self._locked() as servers:
            for ref in refs:
                try:
                    self._delete_locked(servers, ref, _sim_props(ref.properties))
                    out.append(None)
                except DriverError as exc:
                    out.append(exc)
        return out

    def delete(self, ref: ResourceRef) -> None:
        """Forget the server after ``delete_latency``; may fail at ``delete_failure_rate``."""
        props = _sim_props(ref.properties)
        if props.delete_latency:
            self._sleep(props.delete_latency)
        with self._locked() as servers:
            self._delete_locked(servers, ref, props)

    def _delete_locked(self, servers: SimServers, ref: ResourceRef, props: SimProps) -> None:
        rate = props.delete_failure_rate
        if rate and self._draw(props) < rate:
            raise DriverError(f"simulated delete failure of node {ref.node_id}")
        if ref.physical_id is not None:
            servers.pop(ref.physical_id)
            self._watched.pop(ref.physical_id, None)

    def check(self, ref: ResourceRef) -> HealthReport:
        """Unhealthy when the server is unknown or was broken with :meth:`break_node`."""
        with self._locked() as servers:
            server = servers.get(ref.physical_id) if ref.physical_id else None
            broken = server.broken if server is not None else None
        if server is None:
            return HealthReport(False, f"simulated server {ref.physical_id} does not exist")
        if broken is not None:
            return HealthReport(False, broken)
        if server.state != "running":
            return HealthReport(False, f"simulated server {ref.physical_id} is {server.state}")
        return HealthReport(True)

    def reboot(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Simulate a reboot: after ``create_latency`` the same server is healthy again."""
        return self._restart(ref, request, "rebooted", "REBOOT")

    def rebuild(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Simulate a rebuild in place: the same server, healthy, its rebuild count raised."""
        return self._restart(ref, request, "rebuilt", "REBUILD")

    def _restart(
        self, ref: ResourceRef, request: NodeRequest, counter: str, verb: str
    ) -> CreatedResource:
        props = _sim_props(request.properties)
        if props.create_latency:
            self._sleep(props.create_latency)
        with self._locked() as servers:
            server = servers.get(ref.physical_id) if ref.physical_id else None
            if server is None:
                # A server that is gone cannot be rebooted or rebuilt (RECREATE can help).
                raise DriverError(f"cannot {verb} simulated server {ref.physical_id}: it is gone")
            server.broken = None
            server.state = "running"  # a stopped or paused server runs again
            setattr(server, counter, getattr(server, counter) + 1)
            servers.put(str(ref.physical_id), server)
            return CreatedResource(str(ref.physical_id), server.data())

    def restarts(self, physical_id: str) -> tuple[int, int]:
        """Test hook: (reboots, rebuilds) a server went through."""
        with self._locked() as servers:
            server = servers.get(physical_id)
            return (server.rebooted, server.rebuilt) if server else (0, 0)

    # -- events -----------------------------------------------------------------------------

    def watch(self, ref: ResourceRef) -> bool:
        """Report injected failures of this server; one already broken or gone at once."""
        physical_id = ref.physical_id or ""
        with self._locked() as servers:
            server = servers.get(physical_id) if physical_id else None
            if server is not None and server.broken is None:
                self._watched[physical_id] = ref.node_id
                return True
        reason = server.broken if server is not None else None
        self.emit(
            ResourceEvent(
                ref.node_id, physical_id, reason or f"simulated server {physical_id} is gone"
            )
        )
        return True

    def unwatch(self, node_id: str) -> None:
        with self._lock:
            for physical_id in [p for p, n in self._watched.items() if n == node_id]:
                del self._watched[physical_id]

    def kill_node(self, physical_id: str, reason: str = "simulated server died") -> bool:
        """Test hook: the server vanishes as if its host died; False when it is unknown."""
        with self._locked() as servers:
            server = servers.pop(physical_id)
            node_id = self._watched.pop(physical_id, None)
        if server is None:
            return False
        if node_id is not None:
            self.emit(ResourceEvent(node_id, physical_id, reason))
        return True

    def discover(self) -> dict[str, CreatedResource]:
        """Every server held, keyed by node id."""
        with self._locked() as servers:
            items = servers.items()
        return {
            server.node_id: CreatedResource(pid, server.data())
            for pid, server in items
            if server.node_id is not None
        }

    def break_node(self, physical_id: str, reason: str = "simulated failure") -> bool:
        """Test hook: make ``check`` report the server unhealthy; False when it is unknown."""
        with self._locked() as servers:
            server = servers.get(physical_id)
            if server is None:
                return False
            server.broken = reason
            servers.put(physical_id, server)
            node_id = self._watched.pop(physical_id, None)
        if node_id is not None:
            self.emit(ResourceEvent(node_id, physical_id, reason))
        return True

    def __len__(self) -> int:
        with self._locked() as servers:
            return servers.count()

    def _draw(self, props: SimProps) -> float:
        # Called with the lock held: random.Random instances are not shared safely otherwise.
        seed = props.seed
        if seed is None:
            return self._random.random()
        source = self._seeded.get(seed)
        if source is None:
            source = self._seeded[seed] = random.Random(seed)
        return source.random()
