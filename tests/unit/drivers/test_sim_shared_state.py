"""The sim driver's shared state: two drivers on one state file see one simulated cloud.

Two :class:`SimDriver` objects on one file stand for two engines on one data directory
(tests/e2e/test_sim_shared_engines.py runs real engine processes).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from herd.drivers.base import NodeRequest, ResourceRef
from herd.drivers.sim import SimDriver
from herd.errors import DriverError


def request(node_id: str, **properties: object) -> NodeRequest:
    return NodeRequest(
        node_id=node_id, name=node_id, index=1, cluster_id=None, properties=dict(properties)
    )


def ref(node_id: str, physical_id: str | None) -> ResourceRef:
    return ResourceRef(node_id=node_id, physical_id=physical_id, data={}, properties={})


def test_a_server_made_by_one_driver_is_checked_and_deleted_by_another(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    first, second = SimDriver(state_file=state), SimDriver(state_file=state)
    made = first.create(request("n1", zone="z1"))
    assert second.check(ref("n1", made.physical_id)).healthy
    assert set(second.discover()) == {"n1"}
    assert second.discover()["n1"].data == {"placement": {"zone": "z1", "region_name": None}}
    second.delete(ref("n1", made.physical_id))
    assert not first.check(ref("n1", made.physical_id)).healthy
    assert len(first) == 0 and first.discover() == {}


def test_changes_are_seen_across_drivers(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    first, second = SimDriver(state_file=state), SimDriver(state_file=state)
    made = first.create(request("n1"))
    assert second.break_node(made.physical_id, "disk on fire")
    report = first.check(ref("n1", made.physical_id))
    assert (report.healthy, report.reason) == (False, "disk on fire")
    first.reboot(ref("n1", made.physical_id), request("n1"))
    assert second.check(ref("n1", made.physical_id)).healthy
    assert second.restarts(made.physical_id) == (1, 0)
    second.run_operation(ref("n1", made.physical_id), request("n1"), "signal", {"signal": "HUP"})
    second.run_operation(ref("n1", made.physical_id), request("n1"), "stop", {})
    assert first.sim_state(made.physical_id) == {
        "state": "stopped",
        "reboots": 1,
        "signals": ["HUP"],
    }
    assert first.kill_node(made.physical_id)
    assert not second.check(ref("n1", made.physical_id)).healthy


def test_ids_do_not_collide_between_drivers(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    drivers = [SimDriver(state_file=state) for _ in range(3)]
    made = {d.create(request(f"n{i}")).physical_id for i, d in enumerate(drivers * 5)}
    assert len(made) == 15 and len(drivers[0]) == 15


def test_a_failed_create_stores_nothing(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    driver = SimDriver(state_file=state)
    with pytest.raises(DriverError, match="simulated create failure"):
        driver.create(request("n1", failure_rate=1.0))
    assert len(SimDriver(state_file=state)) == 0


def test_adoption_claims_are_shared(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    first, second = SimDriver(state_file=state), SimDriver(state_file=state)
    external = first.add_external(zone="z9")
    preview = second.adopt_preview(external, None, snapshot=True)
    second.claim(preview, "n7")
    assert set(first.discover()) == {"n7"}


def test_the_state_is_a_plain_sqlite_file(tmp_path: Path) -> None:
    state = tmp_path / "sim-servers.sqlite"
    driver = SimDriver(state_file=state)
    made = driver.create(request("n1"))
    driver.close()
    with sqlite3.connect(state) as db:
        rows = db.execute("SELECT physical_id, node_id FROM sim_servers").fetchall()
    assert rows == [(made.physical_id, "n1")]


def test_without_a_state_file_each_driver_has_its_own_cloud() -> None:
    first, second = SimDriver(), SimDriver()
    made = first.create(request("n1"))
    assert not second.check(ref("n1", made.physical_id)).healthy
    assert len(second) == 0
