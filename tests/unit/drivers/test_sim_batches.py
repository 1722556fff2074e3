"""create_many / delete_many: one store transaction, the outcomes single calls give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.sim import SimDriver
from herd.errors import DriverError


def _request(node_id: str, **props: Any) -> NodeRequest:
    return NodeRequest(node_id, node_id, 1, "c1", SimDriver.validate_properties(props), {})


def _ref(created: CreatedResource, node_id: str, **props: Any) -> ResourceRef:
    return ResourceRef(node_id, created.physical_id, {}, SimDriver.validate_properties(props))


@pytest.mark.parametrize("shared", [False, True])
def test_many_creates_and_deletes_like_single_calls(tmp_path: Path, shared: bool) -> None:
    driver = SimDriver(state_file=tmp_path / "sim.db" if shared else None)
    assert driver.calls_are_quick(SimDriver.validate_properties({}))
    assert not driver.calls_are_quick(SimDriver.validate_properties({"create_latency": 0.1}))
    made = driver.create_many([_request(f"n{i}", zone="z1") for i in range(5)])
    assert all(isinstance(r, CreatedResource) for r in made)
    created = [r for r in made if isinstance(r, CreatedResource)]
    assert len({r.physical_id for r in created}) == 5 and len(driver) == 5
    assert created[0].data == driver.create(_request("x", zone="z1")).data
    assert driver.delete_many([_ref(r, f"n{i}") for i, r in enumerate(created)]) == [None] * 5
    assert len(driver) == 1
    driver.close()


def test_failures_are_per_node_and_keep_the_rest() -> None:
    driver = SimDriver()
    made = driver.create_many([_request("bad", failure_rate=1.0), _request("good")])
    assert isinstance(made[0], DriverError) and "node bad" in str(made[0])
    assert isinstance(made[1], CreatedResource) and len(driver) == 1
    errors = driver.delete_many(
        [_ref(made[1], "good", delete_failure_rate=1.0), _ref(made[1], "good")]
    )
    assert isinstance(errors[0], DriverError) and errors[1] is None
    assert len(driver) == 0


def test_latency_falls_back_to_one_call_at_a_time() -> None:
    slept: list[float] = []
    driver = SimDriver(sleep=slept.append)
    made = driver.create_many([_request(n, create_latency=0.5) for n in ("a", "b")])
    assert slept == [0.5, 0.5] and all(isinstance(r, CreatedResource) for r in made)
