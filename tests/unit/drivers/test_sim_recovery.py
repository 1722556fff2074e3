"""The sim driver's simulated REBOOT/REBUILD and its injected-failure events."""

from __future__ import annotations

import pytest
from tests.unit.drivers.test_sim import _ref, _request

from herd.drivers.base import ResourceEvent
from herd.drivers.sim import SimDriver
from herd.errors import DriverError


def test_reboot_and_rebuild_heal_in_place() -> None:
    driver = SimDriver()
    created = driver.create(_request("n1"))
    pid = created.physical_id
    driver.break_node(pid, "kernel panic")
    assert not driver.check(_ref(pid)).healthy
    rebooted = driver.reboot(_ref(pid, "n1"), _request("n1"))
    assert rebooted.physical_id == pid and driver.check(_ref(pid)).healthy
    driver.break_node(pid, "disk corrupt")
    rebuilt = driver.rebuild(_ref(pid, "n1"), _request("n1"))
    assert rebuilt.physical_id == pid and driver.check(_ref(pid)).healthy
    assert driver.restarts(pid) == (1, 1)


def test_a_dead_server_cannot_be_rebooted() -> None:
    driver = SimDriver()
    pid = driver.create(_request("n1")).physical_id
    assert driver.kill_node(pid)
    assert not driver.kill_node(pid)
    report = driver.check(_ref(pid))
    assert not report.healthy and "does not exist" in report.reason
    with pytest.raises(DriverError, match="it is gone"):
        driver.reboot(_ref(pid, "n1"), _request("n1"))


def test_injected_failures_of_watched_servers_are_events() -> None:
    driver = SimDriver()
    seen: list[ResourceEvent] = []
    driver.add_listener(seen.append)
    broken = driver.create(_request("a")).physical_id
    killed = driver.create(_request("b")).physical_id
    quiet = driver.create(_request("c")).physical_id
    for node_id, pid in (("a", broken), ("b", killed)):
        assert driver.watch(_ref(pid, node_id))
    driver.break_node(broken, "disk on fire")
    driver.kill_node(killed)
    driver.break_node(quiet, "nobody watches this one")
    assert seen == [
        ResourceEvent("a", broken, "disk on fire"),
        ResourceEvent("b", killed, "simulated server died"),
    ]


def test_watching_a_broken_or_gone_server_reports_it_at_once() -> None:
    driver = SimDriver()
    seen: list[ResourceEvent] = []
    driver.add_listener(seen.append)
    pid = driver.create(_request("a")).physical_id
    driver.break_node(pid, "broken before the watch")
    driver.watch(_ref(pid, "a"))
    driver.watch(_ref("sim-nope", "b"))
    assert [(e.node_id, e.reason) for e in seen] == [
        ("a", "broken before the watch"),
        ("b", "simulated server sim-nope is gone"),
    ]


def test_delete_and_unwatch_stop_events() -> None:
    driver = SimDriver()
    seen: list[ResourceEvent] = []
    driver.add_listener(seen.append)
    first = driver.create(_request("a")).physical_id
    second = driver.create(_request("b")).physical_id
    driver.watch(_ref(first, "a"))
    driver.watch(_ref(second, "b"))
    driver.delete(_ref(first, "a"))
    driver.unwatch("b")
    driver.break_node(second)
    assert seen == []
