"""The dashboard in a real headless Chromium against a real ``herd serve`` holding real data.

Every page is opened, what it shows is asserted, the scale-in preview and mark-unhealthy forms
are used (including answers the API refuses with 400 and 409, whose texts must show verbatim),
screenshots are taken (``make screenshots`` writes them to docs/images/, which
docs/dashboard.md shows), and no page may log a JavaScript error to the console.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.dashboard.browser import (
    chromium,
    console_errors,
    require_chromium,
    save_screenshot,
    wait_until,
)
from tests.e2e.dashboard.seed import HookReceiver, Seeded, seeded_server
from tests.unit.planner.factory import cluster as iallocator_cluster
from tests.unit.planner.factory import instance

# The pages are visited in order on one seeded server (the health page shows the reset
# the member-row test made): make test distributes whole files (--dist loadfile).
pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.slow]

DOC_IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
# Every run takes every screenshot; `make screenshots` (HERD_SCREENSHOTS=docs) writes them
# over the documentation's copies, other runs into a scratch folder, so a test run leaves the
# checkout clean.
IMAGES = (
    DOC_IMAGES
    if os.environ.get("HERD_SCREENSHOTS") == "docs"
    else Path(tempfile.gettempdir()) / "herd-screenshots"
)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    require_chromium()
    base = tmp_path_factory.mktemp("dashboard")
    with HookReceiver() as receiver, seeded_server(base, receiver.url) as seeded:
        seeded.notes["hook_messages"] = receiver.messages
        yield seeded


@pytest.fixture(scope="module")
def driver(seeded: Seeded) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def by_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def text_of(driver: Any, selector: str) -> str:
    found = by_css(driver, selector)
    return str(found[0].text) if found else ""


def open_page(driver: Any, seeded: Seeded, path: str, ready: str) -> None:
    driver.get(f"{seeded.url}{path}?poll=1")
    wait_until(driver, lambda d: by_css(d, ready), what=f"{ready} on {path}")


def assert_clean_console(driver: Any, *allowed: str) -> None:
    assert console_errors(driver, allowed) == []


def test_clusters_page(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, "/ui/", "tr[data-cluster='web']")
    row = text_of(driver, "tr[data-cluster='web']")
    assert "ACTIVE" in row and "4 / 4" in row and "oldest-first" in row
    assert "CLUSTER_SCALE_IN" in row  # its last action
    hooked = text_of(driver, "tr[data-cluster='hooked']")
    assert "wait-for-drain" in hooked and "RUNNING" in hooked
    assert "ERROR" in text_of(driver, "tr[data-cluster='doomed']")
    assert driver.find_element("css selector", "nav a[aria-current='page']").text == "Clusters"
    save_screenshot(driver, IMAGES / "dashboard-clusters.png")
    assert_clean_console(driver)


def test_cluster_page_members_chart_and_timeline(driver: Any, seeded: Seeded) -> None:
    open_page(
        driver, seeded, f"/ui/clusters/{seeded.web}", f"tr[data-node='{seeded.unhealthy_name}']"
    )
    row = text_of(driver, f"tr[data-node='{seeded.unhealthy_name}']")
    assert "CHECK_FAILED" in row and "disk latency above 2 s" in row
    assert "zone-a / RegionOne" in row and "Reset" in row
    assert len(by_css(driver, "#members tbody tr")) == 4
    # The size chart is drawn from the member events: 4, then 6, then 4.
    wait_until(driver, lambda d: by_css(d, "#size-chart canvas"), what="size chart")
    label = by_css(driver, "#size-chart .chart")[0].get_attribute("aria-label")
    assert "4 members now" in label
    # The scale-in's policy decisions: the unhealthy member first, then the oldest.
    item = wait_until(
        driver, lambda d: by_css(d, "#timeline li[data-action='CLUSTER_SCALE_IN']"), what="timeline"
    )[0]
    item.find_element("css selector", "summary").click()
    victims = wait_until(
        driver, lambda d: item.find_elements("css selector", "tbody tr"), what="victims"
    )
    first, second = (v.text for v in victims[:2])
    assert seeded.notes["first_victim"] in first and "marked unhealthy (CHECK_FAILED)" in first
    assert "OLDEST_FIRST" in second and "removed" in second
    details = item.text
    assert "Grace period" in details and "1 s configured, 1 s waited" in details
    assert "Candidates generated" in details
    # down to the scale-in's decisions: the collapsed older actions would take the PNG over 300 KB
    save_screenshot(driver, IMAGES / "dashboard-cluster.png", until="#timeline li:first-child")
    assert_clean_console(driver)


def test_scale_in_preview_then_run(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, f"/ui/clusters/{seeded.web}", "#scale-count")
    count = by_css(driver, "#scale-count")[0]
    # A count the API refuses: the form shows the API's 400 text as it is.
    api_text = seeded.client.post(
        f"/v1/clusters/{seeded.web}/actions", json={"preview_scale_in": {"count": 0}}
    ).json()["error"]["message"]
    count.clear()
    count.send_keys("0")
    by_css(driver, "#scale-preview")[0].click()
    wait_until(driver, lambda d: text_of(d, "#scale-error"), what="the 400 text")
    assert text_of(driver, "#scale-error") == api_text
    # A real preview: the unhealthy member is ranked first.
    count.clear()
    count.send_keys("2")
    by_css(driver, "#scale-preview")[0].click()
    rows = wait_until(driver, lambda d: by_css(d, "#preview-result tbody tr"), what="preview")
    assert len(rows) == 2
    assert seeded.unhealthy_name in rows[0].text
    assert "marked unhealthy (CHECK_FAILED)" in rows[0].text
    assert text_of(driver, "#scale-error") == ""
    save_screenshot(driver, IMAGES / "dashboard-scale-in-preview.png")
    by_css(driver, "#scale-run")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#scale-notice"), what="scale-in started")
    action_id = notice.removeprefix("Scale-in started: action ").removesuffix(".")
    action = seeded.action_done(f"/v1/actions/{action_id}")
    assert action["status"] == "SUCCEEDED"
    assert action["outputs"]["shrink"]["victims"][0] == seeded.unhealthy_node
    wait_until(driver, lambda d: len(by_css(d, "#members tbody tr")) == 2, what="members redrawn")
    assert_clean_console(driver, f"/v1/clusters/{seeded.web}/actions")


def test_mark_unhealthy_and_reset_from_the_member_row(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, f"/ui/clusters/{seeded.web}", "#members tbody tr")
    name = by_css(driver, "#members tbody tr")[0].get_attribute("data-node")
    selector = f"tr[data-node='{name}']"
    by_css(driver, f"{selector} button")[0].click()
    wait_until(driver, lambda d: by_css(d, "#mark-dialog[open]"), what="dialog")
    assert driver.switch_to.active_element.get_attribute("id") == "mark-reason"  # keyboard focus
    by_css(driver, "#mark-reason")[0].send_keys("liveness probe failing")
    by_css(driver, "#mark-submit")[0].click()
    wait_until(driver, lambda d: "liveness probe failing" in text_of(d, selector), what="marked")
    assert "CHECK_FAILED" in text_of(driver, selector)
    node = seeded.client.get("/v1/nodes", params={"name": name}).json()["nodes"][0]
    assert node["health"] == "CHECK_FAILED" and node["health_reason"] == "liveness probe failing"
    by_css(driver, f"{selector} button")[0].click()  # now "Reset"
    wait_until(driver, lambda d: by_css(d, "#mark-dialog[open]"), what="dialog")
    assert text_of(driver, "#mark-submit") == "Reset health"
    by_css(driver, "#mark-submit")[0].click()
    wait_until(driver, lambda d: "CHECK_COMPLETE" in text_of(d, selector), what="reset")
    assert_clean_console(driver)


def test_mark_unhealthy_while_an_action_holds_the_lock_shows_the_409(
    driver: Any, seeded: Seeded
) -> None:
    open_page(driver, seeded, f"/ui/clusters/{seeded.hooked}", "#members tbody tr button")
    # the member rows are drawn first, the rest of the page when its reads have come back
    wait_until(driver, lambda d: by_css(d, "#waiting-hooks tbody tr"), what="the waiting hook")
    member = by_css(driver, "#members tbody tr")[0]
    name = member.get_attribute("data-node")
    node_id = seeded.client.get("/v1/nodes", params={"name": name}).json()["nodes"][0]["id"]
    api = seeded.client.patch(
        f"/v1/clusters/{seeded.hooked}/nodes/{node_id}", json={"mark_unhealthy": True}
    )
    assert api.status_code == 409
    member.find_element("css selector", "button").click()
    wait_until(driver, lambda d: by_css(d, "#mark-dialog[open]"), what="dialog")
    by_css(driver, "#mark-submit")[0].click()
    wait_until(driver, lambda d: text_of(d, "#mark-error"), what="the 409 text")
    assert text_of(driver, "#mark-error") == api.json()["error"]["message"]
    assert "already has an action (CLUSTER_SCALE_IN) in progress" in text_of(driver, "#mark-error")
    save_screenshot(driver, IMAGES / "dashboard-mark-unhealthy-409.png")
    by_css(driver, "#mark-cancel")[0].click()
    # The waiting hook shows in the action timeline: sent, not answered yet.
    item = by_css(driver, "#timeline li[data-action='CLUSTER_SCALE_IN']")[0]
    item.find_element("css selector", "summary").click()
    hooks = wait_until(
        driver, lambda d: "Lifecycle hooks sent" in item.text and item.text, what="hooks"
    )
    assert "SENT" in hooks and "WAITING" in hooks
    assert seeded.notes["hook_messages"], "the receiver got the hook message"
    assert_clean_console(driver, f"/v1/clusters/{seeded.hooked}/nodes/")


def test_deletions_page_and_purge(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, "/ui/deletions", f"tr[data-resource='{seeded.doomed}']")
    row = text_of(driver, f"tr[data-resource='{seeded.doomed}']")
    assert "cluster" in row and "ERROR" in row and "R1" in row
    assert "simulated delete failure" in row
    save_screenshot(driver, IMAGES / "dashboard-deletions.png")
    button = by_css(driver, f"tr[data-resource='{seeded.doomed}'] button")[0]
    button.click()
    assert "Confirm purge" in button.text  # a second, deliberate click purges
    button.click()
    # The API hands the deletion to a DELETION_PURGE action; the page follows it to its end.
    notice = wait_until(
        driver,
        lambda d: "Purged" in text_of(d, "#purge-notice") and text_of(d, "#purge-notice"),
        what="purged",
    )
    assert f"Purged cluster {seeded.doomed}" in notice and "regional copies" in notice
    assert seeded.client.get("/v1/deletions").json()["deletions"] == []
    wait_until(
        driver, lambda d: "No deletion in progress" in text_of(d, "#deletions"), what="empty"
    )
    assert_clean_console(driver)


def test_health_page(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, "/ui/health", "#detections table")
    detections = text_of(driver, "#detections")
    assert "NODE_MARK_UNHEALTHY" in detections and "disk latency above 2 s" in detections
    assert "app reports 503 on /ready" in detections
    recoveries = text_of(driver, "#recoveries")
    assert "NODE_MARK_HEALTHY" in recoveries  # the reset made from the member row
    save_screenshot(driver, IMAGES / "dashboard-health.png")
    assert_clean_console(driver)


def relocation_request() -> dict[str, Any]:
    instances = {
        f"db{i}": instance("drbd", ["n1", f"n{2 + i % 3}"], memory=2048 + 512 * i, disk=20_000)
        for i in range(4)
    }
    instances["scratch"] = instance("plain", ["n1"], memory=1024, disk=5_000)
    return iallocator_cluster(
        {"g1": ["n1", "n2", "n3", "n4", "n5"]},
        instances,
        {"type": "node-evacuate", "evac_mode": "all", "instances": sorted(instances)},
    )


def test_relocation_page(driver: Any, seeded: Seeded) -> None:
    open_page(driver, seeded, "/ui/relocation", "#reloc-request")
    # A request that is not JSON: the API's 400 text, as it is.
    by_css(driver, "#reloc-request")[0].send_keys("{not json")
    by_css(driver, "#reloc-plan")[0].click()
    error = wait_until(driver, lambda d: text_of(d, "#reloc-error"), what="400 text")
    assert error.startswith("Parsing input IAllocator message: Invalid JSON")
    text = json.dumps(relocation_request())
    box = by_css(driver, "#reloc-request")[0]
    box.clear()
    driver.execute_script("arguments[0].value = arguments[1]", box, text)
    by_css(driver, "#reloc-plan")[0].click()
    wait_until(driver, lambda d: by_css(d, "#memory-chart canvas"), what="memory chart")
    assert by_css(driver, "#disk-chart canvas")
    info = text_of(driver, "#plan-info")
    assert "1 instances failed to move and 4 were moved successfully" in info
    assert "Instances of type plain cannot be relocated" in text_of(
        driver, "tr[data-instance='scratch']"
    )
    assert "moved" in text_of(driver, "tr[data-instance='db0']")
    jobs = by_css(driver, "tr[data-job]")
    assert len(jobs) == 4 and all("migrate" in j.text for j in jobs)
    assert text_of(driver, "#reloc-error") == ""
    save_screenshot(driver, IMAGES / "dashboard-relocation.png")
    assert_clean_console(driver, "/v1/relocation-plans")
