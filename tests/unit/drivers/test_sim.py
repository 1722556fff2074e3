"""The sim driver: latency, seeded failures, placement, scale and thread safety."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from herd.drivers.base import NodeRequest, ResourceRef
from herd.drivers.sim import SimDriver
from herd.errors import DriverError, InvalidSpec


def _request(node_id: str, placement: dict[str, Any] | None = None, **props: Any) -> NodeRequest:
    return NodeRequest(
        node_id, node_id, 1, "c1", SimDriver.validate_properties(props), placement or {}
    )


def _ref(physical_id: str | None, node_id: str = "n", **props: Any) -> ResourceRef:
    return ResourceRef(node_id, physical_id, {}, SimDriver.validate_properties(props))


def test_create_check_delete() -> None:
    driver = SimDriver()
    created = driver.create(_request("n1"))
    assert len(driver) == 1
    assert driver.check(_ref(created.physical_id)).healthy
    driver.delete(_ref(created.physical_id))
    driver.delete(_ref(created.physical_id))  # idempotent
    assert len(driver) == 0
    report = driver.check(_ref(created.physical_id))
    assert not report.healthy and "does not exist" in report.reason


def test_placement_from_request_then_profile_defaults() -> None:
    driver = SimDriver()
    given = driver.create(_request("a", {"zone": "z2", "region_name": "r2"}, zone="z1"))
    assert given.data == {"placement": {"zone": "z2", "region_name": "r2"}}
    default = driver.create(_request("b", zone="z1", region="r1"))
    assert default.data == {"placement": {"zone": "z1", "region_name": "r1"}}
    bare = driver.create(_request("c"))
    assert bare.data == {"placement": {"zone": None, "region_name": None}}


def test_latency_is_honoured() -> None:
    slept: list[float] = []
    driver = SimDriver(sleep=slept.append)
    created = driver.create(_request("n1", create_latency=0.1))
    driver.delete(_ref(created.physical_id, delete_latency=0.25))
    assert slept == [0.1, 0.25]
    began = time.monotonic()
    SimDriver().create(_request("n2", create_latency=0.1))
    assert time.monotonic() - began >= 0.1  # the default really sleeps


def test_latency_overlaps_between_threads() -> None:
    # Each simulated latency waits until all eight are inside it at once: that can only
    # happen when the latency is spent outside the driver's lock (a hang fails the barrier).
    together = threading.Barrier(8, timeout=60)

    def wait_for_the_others(_seconds: float) -> None:
        together.wait()

    driver = SimDriver(sleep=wait_for_the_others)
    threads = [
        threading.Thread(target=driver.create, args=(_request(f"n{i}", create_latency=0.2),))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not together.broken
    assert len(driver) == 8


def _outcomes(driver: SimDriver, seed: int | None, count: int = 200) -> list[bool]:
    results = []
    for i in range(count):
        try:
            driver.create(_request(f"n{i}", failure_rate=0.3, seed=seed))
            results.append(True)
        except DriverError as exc:
            assert "simulated create failure" in exc.message
            results.append(False)
    return results


def test_failure_rate_with_seed_is_repeatable() -> None:
    first = _outcomes(SimDriver(), seed=42)
    assert first == _outcomes(SimDriver(), seed=42)
    assert first != _outcomes(SimDriver(), seed=7)
    assert 30 < first.count(False) < 90  # about 30 % of 200


def test_failure_rate_extremes() -> None:
    driver = SimDriver()
    with pytest.raises(DriverError, match="simulated create failure"):
        driver.create(_request("n1", failure_rate=1))
    assert len(driver) == 0
    created = driver.create(_request("n2"))
    with pytest.raises(DriverError, match="simulated delete failure"):
        driver.delete(_ref(created.physical_id, delete_failure_rate=1))
    assert len(driver) == 1


def test_break_node_makes_check_fail() -> None:
    driver = SimDriver()
    created = driver.create(_request("n1"))
    assert driver.break_node(created.physical_id, "disk on fire")
    report = driver.check(_ref(created.physical_id))
    assert not report.healthy and report.reason == "disk on fire"
    assert not driver.break_node("sim-unknown")
    recovered = driver.recover(_ref(created.physical_id), _request("n1"))
    assert driver.check(_ref(recovered.physical_id)).healthy


def test_discover_returns_what_it_holds() -> None:
    driver = SimDriver()
    created = {f"n{i}": driver.create(_request(f"n{i}", zone="z")) for i in range(5)}
    assert driver.discover() == created


def test_hundred_thousand_nodes() -> None:
    # How fast is bench/engine.py's business; here only that nothing is lost or shared.
    driver = SimDriver()
    props = SimDriver.validate_properties({"zone": "z1"})
    ids = [
        driver.create(NodeRequest(f"n{i}", f"n{i}", i, "c", props)).physical_id
        for i in range(100_000)
    ]
    assert len(driver) == 100_000 and len(set(ids)) == 100_000
    for node_id, physical_id in zip(range(100_000), ids, strict=True):
        driver.delete(ResourceRef(f"n{node_id}", physical_id, {}, props))
    assert len(driver) == 0


def test_thread_safety() -> None:
    driver = SimDriver()
    props = SimDriver.validate_properties({})
    errors: list[BaseException] = []
    kept: list[list[str]] = [[] for _ in range(8)]

    def work(worker: int) -> None:
        try:
            for i in range(2000):
                pid = driver.create(NodeRequest(f"w{worker}-{i}", "x", i, "c", props)).physical_id
                if i % 2:
                    driver.delete(ResourceRef(f"w{worker}-{i}", pid, {}, props))
                else:
                    kept[worker].append(pid)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(driver) == 8000
    assert {res.physical_id for res in driver.discover().values()} == {
        pid for ids in kept for pid in ids
    }


@pytest.mark.parametrize(
    ("props", "field"),
    [
        ({"failure_rate": 1.5}, "properties.failure_rate"),
        ({"delete_failure_rate": -0.1}, "properties.delete_failure_rate"),
        ({"create_latency": "slow"}, "properties.create_latency"),
        ({"delete_latency": True}, "properties.delete_latency"),
        ({"zone": 3}, "properties.zone"),
        ({"seed": 1.5}, "properties.seed"),
        ({"flavor": "m1"}, "properties.flavor"),
    ],
)
def test_validation_names_the_field(props: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        SimDriver.validate_properties(props)
    assert caught.value.field == field and field in caught.value.message


def test_validation_defaults() -> None:
    assert SimDriver.validate_properties({}) == {
        "create_latency": 0.0,
        "delete_latency": 0.0,
        "failure_rate": 0.0,
        "delete_failure_rate": 0.0,
        "zone": None,
        "region": None,
        "seed": None,
    }
