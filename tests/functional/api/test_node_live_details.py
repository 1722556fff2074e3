"""``GET /v1/nodes/<id>?show_details=true`` asks a driver that can tell for the resource's
current details (``Driver.current_details``; the Heat driver reads the stack): its answer,
Heat's "gone", a backend that fails or does not answer in time (the stored details with
Senlin's ``Error``), and lists that never ask. The real Heat case is
``tests/e2e/test_heat_stack_profile.py``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import make_node, make_profile, set_row
from tests.waiting import wait_for

from herd.api.services import live_details
from herd.config import Settings
from herd.drivers.base import ResourceGone, ResourceRef
from herd.drivers.registry import DriverRegistry
from herd.drivers.sim import SimDriver
from herd.errors import DriverError
from herd.store.models import NodeRow

STORED = {"stack_status": "CREATE_COMPLETE"}


class LiveSim(SimDriver):
    """The simulated driver, answering ``current_details`` as the test says."""

    def __init__(self) -> None:
        super().__init__()
        self.answer: Any = {"stack_status": "UPDATE_COMPLETE"}
        self.asked: list[ResourceRef] = []
        self.release = threading.Event()

    def current_details(self, ref: ResourceRef) -> dict[str, Any] | None:
        self.asked.append(ref)
        if self.answer == "hang":
            self.release.wait(30)
            return {}
        if isinstance(self.answer, Exception):
            raise self.answer
        return dict(self.answer)


@pytest.fixture
def live(api_client: ApiClientFactory, settings: Settings) -> tuple[TestClient, LiveSim]:
    driver = LiveSim()
    registry = DriverRegistry()
    registry.register(driver)
    return api_client(settings, drivers=registry), driver


def _node(client: TestClient) -> str:
    node = make_node(client, make_profile(client), "shown")
    set_row(client, NodeRow, node, physical_id="phys-1", data=STORED, status="ACTIVE")
    return node


def _details(client: TestClient, node: str) -> dict[str, Any]:
    answer = client.get(f"/v1/nodes/{node}?show_details=true")
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["node"]["details"])


def test_a_node_shown_with_details_gets_the_drivers_current_ones(
    live: tuple[TestClient, LiveSim],
) -> None:
    client, driver = live
    node = _node(client)
    assert _details(client, node) == {"stack_status": "UPDATE_COMPLETE"}
    [ref] = driver.asked
    assert (ref.node_id, ref.physical_id, dict(ref.data)) == (node, "phys-1", STORED)
    # without show_details, and in lists, nothing is asked
    assert "details" not in client.get(f"/v1/nodes/{node}").json()["node"]
    listed = client.get("/v1/nodes?show_details=true").json()["nodes"]
    assert [n["details"] for n in listed] == [STORED]
    assert len(driver.asked) == 1


def test_a_gone_or_failing_backend_shows_the_stored_details_with_the_reason(
    live: tuple[TestClient, LiveSim],
) -> None:
    client, driver = live
    node = _node(client)
    driver.answer = ResourceGone("stack phys-1 does not exist in Heat")
    details = _details(client, node)
    assert details["stack_status"] == "CREATE_COMPLETE"
    assert details["Error"]["code"] == 404
    assert details["Error"]["message"].startswith("stack phys-1 does not exist in Heat; ")
    driver.answer = DriverError("reading the stack: connection refused", retryable=True)
    details = _details(client, node)
    assert details["Error"]["code"] == 503
    assert "connection refused" in details["Error"]["message"]


def test_a_backend_that_does_not_answer_in_time_shows_the_stored_details(
    live: tuple[TestClient, LiveSim], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, driver = live
    node = _node(client)
    monkeypatch.setattr(live_details, "TIMEOUT", 0.2)
    driver.answer = "hang"
    try:
        details = _details(client, node)
    finally:
        driver.release.set()
    assert details["stack_status"] == "CREATE_COMPLETE"
    assert details["Error"]["code"] == 504
    assert details["Error"]["message"].startswith("the herd.sim backend did not answer in 0.2 s; ")


def test_reads_the_backend_has_not_answered_hold_their_slots(
    live: tuple[TestClient, LiveSim], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, driver = live
    node = _node(client)
    monkeypatch.setattr(live_details, "TIMEOUT", 0.2)
    monkeypatch.setattr(live_details, "READS_IN_FLIGHT", 1)
    driver.answer = "hang"
    try:
        assert _details(client, node)["Error"]["code"] == 504
        busy = _details(client, node)  # the first read still waits for the backend
        assert len(driver.asked) == 1
    finally:
        driver.release.set()
    assert busy["Error"]["code"] == 503 and busy["stack_status"] == "CREATE_COMPLETE"
    assert busy["Error"]["message"].startswith(
        "1 earlier reads of the herd.sim backend are unanswered; "
    )
    driver.answer = {"stack_status": "UPDATE_COMPLETE"}
    # the hung read ends and gives its slot back
    wait_for(lambda: "Error" not in _details(client, node), 30, 0.1)


def test_a_node_without_a_resource_is_not_asked(live: tuple[TestClient, LiveSim]) -> None:
    client, driver = live
    node = make_node(client, make_profile(client), "empty")
    assert _details(client, node) == {}
    assert driver.asked == []
