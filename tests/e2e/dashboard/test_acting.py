"""The dashboard acting, in a real headless Chromium against a real ``herd serve`` (sim driver).

Each form is used as an operator would: first with a value the API refuses (its 400 text must
show as it is), then for real, and the action it started is followed to its end through the
API. The tests run in order on one server (a file is one unit under ``--dist loadfile``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.dashboard.browser import chromium, require_chromium, save_screenshot, wait_until
from tests.e2e.dashboard.seed import MV, sim_spec, wait_for
from tests.e2e.dashboard.test_dashboard import IMAGES, assert_clean_console, by_css, text_of
from tests.e2e.server import HerdServer

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.slow]


@dataclass
class Bed:
    url: str
    client: httpx.Client
    cluster: str
    profile: str

    def done(self, action_id: str) -> dict[str, Any]:
        def ended() -> dict[str, Any] | None:
            action = self.client.get(f"/v1/actions/{action_id}").json()["action"]
            return action if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") else None

        result: dict[str, Any] = wait_for(ended, what=f"action {action_id}")
        return result

    def members(self) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = self.client.get(
            "/v1/nodes", params={"cluster_id": self.cluster, "sort": "index:asc"}
        ).json()["nodes"]
        return nodes

    def api_error(self, method: str, path: str, body: Any = None) -> str:
        response = self.client.request(method, path, json=body)
        assert 400 <= response.status_code < 500, response.text
        return str(response.json()["error"]["message"])


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    require_chromium()
    base: Path = tmp_path_factory.mktemp("acting")
    server = HerdServer(base / "data", free_port())
    server.start()
    client = httpx.Client(base_url=server.url, headers=MV, timeout=30)
    try:
        spec = sim_spec(create_latency=0.01, zone="zone-a", region="RegionOne")
        r = client.post("/v1/profiles", json={"profile": {"name": "sim", "spec": spec}})
        profile = r.json()["profile"]["id"]
        r = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "acting", "profile_id": profile, "desired_capacity": 3}},
        )
        made = Bed(server.url, client, r.json()["cluster"]["id"], profile)
        assert made.done(r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
        yield made
    finally:
        client.close()
        server.stop()


@pytest.fixture(scope="module")
def driver(bed: Bed) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


@pytest.fixture(autouse=True)
def page_left_behind(driver: Any) -> Iterator[None]:
    """After each test, a blank page and an empty console: a failed test's page would go on
    polling, and its console entries would fail the next test too."""
    yield
    driver.get("about:blank")
    driver.get_log("browser")


def open_page(driver: Any, bed: Bed, path: str, ready: str) -> None:
    driver.get(f"{bed.url}{path}?poll=1")
    wait_until(driver, lambda d: by_css(d, ready), what=f"{ready} on {path}")


def type_into(driver: Any, selector: str, text: str) -> None:
    box = by_css(driver, selector)[0]
    box.clear()
    box.send_keys(text)


def click(driver: Any, selector: str) -> None:
    """Click the first match, again if a live redraw replaced it meanwhile."""

    def clicked(d: Any) -> bool:
        found = by_css(d, selector)
        if found:
            found[0].click()
        return bool(found)

    wait_until(driver, clicked, what=f"click {selector}")


def started_action(notice: str) -> str:
    return notice.rsplit("action ", 1)[1].removesuffix(".")


def test_a_missing_cluster_says_not_found(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, "/ui/clusters/no-such-cluster", "#not-found")
    assert text_of(driver, "#not-found") == "Cluster not found"
    assert "no-such-cluster" in text_of(driver, "#summary")
    assert by_css(driver, "#cluster-rest")[0].is_displayed() is False
    open_page(driver, bed, "/ui/nodes/no-such-node", "#not-found")
    assert text_of(driver, "#not-found") == "Node not found"
    assert_clean_console(driver, "no-such-cluster", "no-such-node")


def test_scale_out_and_resize_from_the_cluster_page(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, f"/ui/clusters/{bed.cluster}", "#members tbody tr")
    assert len(by_css(driver, "#members tbody tr")) == 3
    # refused: the API's texts, verbatim
    want = bed.api_error(
        "POST", f"/v1/clusters/{bed.cluster}/actions", {"scale_out": {"count": "x"}}
    )
    type_into(driver, "#scale-out-count", "x")
    by_css(driver, "#scale-out-submit")[0].click()
    assert wait_until(driver, lambda d: text_of(d, "#scale-out-error"), what="400") == want
    type_into(driver, "#scale-out-count", "2")
    by_css(driver, "#scale-out-submit")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#scale-out-notice"), what="started")
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    wait_until(driver, lambda d: len(by_css(d, "#members tbody tr")) == 5, what="5 rows")
    wait_until(driver, lambda d: text_of(d, "#member-count") == "5 / 5", what="5 / 5")

    want = bed.api_error(
        "POST",
        f"/v1/clusters/{bed.cluster}/actions",
        {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": -1, "strict": True}},
    )
    type_into(driver, "#resize-number", "-1")
    by_css(driver, "#resize-submit")[0].click()
    assert wait_until(driver, lambda d: text_of(d, "#resize-error"), what="400") == want
    type_into(driver, "#resize-number", "4")
    by_css(driver, "#resize-submit")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#resize-notice"), what="started")
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    wait_until(driver, lambda d: len(by_css(d, "#members tbody tr")) == 4, what="4 rows")
    # the chart reads the stored history: 0, 3, 5, 4 members
    history = bed.client.get(f"/v1/clusters/{bed.cluster}/size-history").json()
    sizes = [p["members"] for p in history["size_history"]]
    changes = [n for i, n in enumerate(sizes) if i == 0 or n != sizes[i - 1]]
    assert changes == [0, 3, 5, 4], history
    assert history["size_history"][-1]["desired_capacity"] == 4
    wait_until(
        driver,
        lambda d: (
            "4 members now, desired 4"
            in by_css(d, "#size-chart .chart")[0].get_attribute("aria-label")
        ),
        what="the chart's label",
    )
    # the action's request id shows in the timeline
    item = by_css(driver, "#timeline li[data-action='CLUSTER_RESIZE']")[0]
    item.find_element("css selector", "summary").click()
    request_id = bed.client.get(f"/v1/actions/{started_action(notice)}").json()["action"][
        "request_id"
    ]
    assert request_id and f"request {request_id}" in item.text
    # down to the forms: the whole page is a PNG over 300 KB (dashboard-cluster.png has it)
    save_screenshot(driver, IMAGES / "dashboard-act.png", until="section[aria-labelledby='act-h']")
    assert_clean_console(driver, f"/v1/clusters/{bed.cluster}/actions")


def test_the_action_page_follows_its_request(driver: Any, bed: Bed) -> None:
    open_page(
        driver, bed, f"/ui/clusters/{bed.cluster}", "#timeline li[data-action='CLUSTER_RESIZE']"
    )
    resize_item = "#timeline li[data-action='CLUSTER_RESIZE']"
    click(driver, f"{resize_item} summary")  # the timeline is redrawn live: click, retrying
    click(driver, f"{resize_item} a[href^='/ui/actions/']")
    wait_until(driver, lambda d: by_css(d, "#action-caused tbody tr"), what="what it caused")
    resize = bed.client.get(
        "/v1/actions", params={"cluster_id": bed.cluster, "action": "CLUSTER_RESIZE"}
    ).json()["actions"][0]
    assert text_of(driver, "#action-request") == resize["request_id"]
    caused = [r.get_attribute("data-caused") for r in by_css(driver, "tr[data-caused]")]
    assert caused[0] == "CLUSTER_RESIZE" and "NODE_DELETE" in caused  # the member it removed
    listed = bed.client.get("/v1/actions", params={"request_id": resize["request_id"]})
    assert len(caused) == len(listed.json()["actions"])
    assert "NODE" in text_of(driver, "#action-caused")  # the events its children recorded
    save_screenshot(driver, IMAGES / "dashboard-action.png")
    assert_clean_console(driver)


def test_member_filters_sort_and_pages(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, f"/ui/clusters/{bed.cluster}", "#members tbody tr")
    names = [m["name"] for m in bed.members()]
    type_into(driver, "#filter-name", names[1])
    by_css(driver, "#members-apply")[0].click()
    wait_until(driver, lambda d: len(by_css(d, "#members tbody tr")) == 1, what="one row")
    assert by_css(driver, "#members tbody tr")[0].get_attribute("data-node") == names[1]
    # the pager is drawn once the member count is in, after the rows (members.js)
    wait_until(
        driver, lambda d: "matching the filters" in text_of(d, "#members-range"), what="pager"
    )
    type_into(driver, "#filter-name", "")
    type_into(driver, "#filter-zone", "zone-b")
    by_css(driver, "#members-apply")[0].click()
    wait_until(driver, lambda d: "No member matches" in text_of(d, "#members"), what="none")
    type_into(driver, "#filter-zone", "zone-a")
    from selenium.webdriver.support.ui import Select

    Select(by_css(driver, "#members-dir")[0]).select_by_value("desc")
    Select(by_css(driver, "#members-limit")[0]).select_by_value("25")
    by_css(driver, "#members-apply")[0].click()
    wait_until(
        driver,
        lambda d: (
            [r.get_attribute("data-node") for r in by_css(d, "#members tbody tr")] == names[::-1]
        ),
        what="descending rows",
    )
    shown = f"Rows 1\N{EN DASH}{len(names)} matching the filters"
    wait_until(driver, lambda d: text_of(d, "#members-range") == shown, what=shown)
    assert_clean_console(driver)


def test_node_page_recover_and_delete(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, f"/ui/clusters/{bed.cluster}", "#members tbody tr a")
    member = bed.members()[0]
    by_css(driver, f"tr[data-node='{member['name']}'] a")[0].click()
    wait_until(driver, lambda d: by_css(d, "#node-health"), what="node page")
    assert member["name"] in text_of(driver, "#node-summary")
    assert "not backing off" in text_of(driver, "#node-backoff")
    assert text_of(driver, "#node-failures") == "0"
    wait_until(driver, lambda d: by_css(d, "#node-events tbody tr"), what="its events")
    created = text_of(driver, "#node-events")
    assert "Creation succeeded" in created and "req-" in created  # the request that made it
    by_css(driver, "#node-recover")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#node-notice"), what="recover started")
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    wait_until(driver, lambda d: "NODE_RECOVER" in text_of(d, "#node-events"), what="event")
    save_screenshot(driver, IMAGES / "dashboard-node.png")
    delete = by_css(driver, "#node-delete")[0]
    delete.click()
    assert delete.text == "Confirm delete"
    delete.click()
    # the notice shows until the node is gone, then the page says it is not found
    wait_until(
        driver,
        lambda d: text_of(d, "#node-notice") == "Deletion started." or by_css(d, "#not-found"),
        what="deleting",
    )
    wait_for(lambda: member["id"] not in {m["id"] for m in bed.members()}, what="node gone")
    wait_until(driver, lambda d: by_css(d, "#not-found"), what="the node page says so")
    driver.get("about:blank")  # its polling would log the 404 again, into the next test
    assert_clean_console(driver, member["id"])


def test_recover_and_delete_from_the_member_row(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, f"/ui/clusters/{bed.cluster}", "#members tbody tr")
    member = bed.members()[0]
    row = f"tr[data-node='{member['name']}']"
    by_css(driver, f"{row} button[aria-label^='Recover']")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#member-notice"), what="recover started")
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    # the row redrawn with the recovery's result, so the two clicks hit the same button
    wait_until(driver, lambda d: "Recovered" in text_of(d, row), what="recovered row")
    by_css(driver, f"{row} button[aria-label^='Delete']")[0].click()
    by_css(driver, f"{row} button[aria-label^='Delete']")[0].click()
    wait_until(driver, lambda d: "Deletion of" in text_of(d, "#member-notice"), what="deleting")
    wait_for(lambda: member["id"] not in {m["id"] for m in bed.members()}, what="member gone")
    wait_until(driver, lambda d: not by_css(d, row), what="its row gone")
    assert_clean_console(driver)


def test_policies_and_deleting_the_cluster(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, f"/ui/clusters/{bed.cluster}", "#policy-id")
    want = bed.api_error(
        "POST", f"/v1/clusters/{bed.cluster}/actions", {"policy_attach": {"policy_id": "nope"}}
    )
    type_into(driver, "#policy-id", "nope")
    by_css(driver, "#policy-attach")[0].click()
    assert wait_until(driver, lambda d: text_of(d, "#policy-error"), what="400") == want
    spec = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}
    bed.client.post("/v1/policies", json={"policy": {"name": "oldest", "spec": spec}})
    type_into(driver, "#policy-id", "oldest")
    by_css(driver, "#policy-attach")[0].click()
    notice = wait_until(driver, lambda d: text_of(d, "#policy-notice"), what="attach started")
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    wait_until(
        driver, lambda d: "oldest (senlin.policy.deletion" in text_of(d, "#summary"), what="shown"
    )
    # deleting with a policy attached: the API's 409
    want = bed.api_error("DELETE", f"/v1/clusters/{bed.cluster}")
    button = by_css(driver, "#delete-cluster")[0]
    button.click()
    button.click()
    assert wait_until(driver, lambda d: text_of(d, "#delete-cluster-error"), what="409") == want
    by_css(driver, "#policy-detach")[0].click()
    notice = wait_until(
        driver,
        lambda d: "Detach started" in text_of(d, "#policy-notice") and text_of(d, "#policy-notice"),
        what="detach",
    )
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    by_css(driver, "#delete-cluster")[0].click()
    # The notice, or the page that replaces it: a cluster of a few sim members can be gone
    # before the next look, and the not-found page hides the forms (and the notice with them).
    said = wait_until(
        driver,
        lambda d: (
            text_of(d, "#delete-cluster-notice")
            or text_of(d, "#not-found")
            or text_of(d, "#delete-cluster-error")
        ),
        what="deleting",
    )
    assert said in ("Deletion started.", "Cluster not found"), said
    wait_for(lambda: bed.client.get(f"/v1/clusters/{bed.cluster}").status_code == 404, what="gone")
    wait_until(driver, lambda d: by_css(d, "#not-found"), what="the page says so")
    driver.get("about:blank")  # its polling would log the 404 again, into the next test
    # the gone cluster's member list is a 400 ("Cannot find the given cluster") too
    assert_clean_console(driver, f"/v1/clusters/{bed.cluster}", f"cluster_id={bed.cluster}")


def test_create_a_cluster(driver: Any, bed: Bed) -> None:
    open_page(driver, bed, "/ui/", "#create-profile option")
    want = bed.api_error(
        "POST",
        "/v1/clusters",
        {"cluster": {"name": "made", "profile_id": bed.profile, "desired_capacity": "x"}},
    )
    type_into(driver, "#create-name", "made")
    type_into(driver, "#create-desired", "x")
    by_css(driver, "#create-submit")[0].click()
    assert wait_until(driver, lambda d: text_of(d, "#create-error"), what="400") == want
    type_into(driver, "#create-desired", "2")
    by_css(driver, "#create-submit")[0].click()
    wait_until(driver, lambda d: text_of(d, "#create-notice"), what="creating")
    wait_until(driver, lambda d: "2 / 2" in text_of(d, "tr[data-cluster='made']"), what="made, 2")
    save_screenshot(driver, IMAGES / "dashboard-create.png")
    assert_clean_console(driver, "/v1/clusters")


def test_receivers_list_create_copy_trigger_and_delete(driver: Any, bed: Bed) -> None:
    r = bed.client.post(
        "/v1/clusters",
        json={"cluster": {"name": "alarmed", "profile_id": bed.profile, "desired_capacity": 1}},
    )
    cluster = r.json()["cluster"]["id"]
    assert bed.done(r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
    open_page(driver, bed, f"/ui/clusters/{cluster}", "#receiver-form")
    wait_until(driver, lambda d: "No receiver" in text_of(d, "#receivers"), what="empty list")
    bad = {"name": "up", "type": "webhook", "cluster_id": cluster, "action": "CLUSTER_SCALE_OUT"}
    want = bed.api_error("POST", "/v1/receivers", {"receiver": {**bad, "params": {"count": -1}}})
    type_into(driver, "#receiver-name", "up")
    type_into(driver, "#receiver-params", '{"count": -1}')
    by_css(driver, "#receiver-create")[0].click()
    assert wait_until(driver, lambda d: text_of(d, "#receiver-error"), what="400") == want
    type_into(driver, "#receiver-params", '{"count": 2}')
    by_css(driver, "#receiver-create")[0].click()
    wait_until(driver, lambda d: by_css(d, "tr[data-receiver='up']"), what="its row")
    (receiver,) = bed.client.get("/v1/receivers", params={"cluster_id": cluster}).json()[
        "receivers"
    ]
    url_box = by_css(driver, "tr[data-receiver='up'] input")[0]
    assert url_box.get_attribute("value") == receiver["channel"]["alarm_url"]
    click(driver, "tr[data-receiver='up'] button[aria-label^='Copy']")
    wait_until(driver, lambda d: text_of(d, "#receiver-notice") == "Copied the URL of up.")
    click(driver, "tr[data-receiver='up'] button[aria-label^='Trigger']")
    notice = wait_until(
        driver,
        lambda d: "triggered" in text_of(d, "#receiver-notice") and text_of(d, "#receiver-notice"),
    )
    assert bed.done(started_action(notice))["status"] == "SUCCEEDED"
    wait_until(driver, lambda d: len(by_css(d, "#members tbody tr")) == 3, what="scaled out by 2")
    save_screenshot(driver, IMAGES / "dashboard-receivers.png")
    click(driver, "tr[data-receiver='up'] button[aria-label^='Delete']")
    wait_until(driver, lambda d: "No receiver" in text_of(d, "#receivers"), what="deleted")
    assert bed.client.get(f"/v1/receivers/{receiver['id']}").status_code == 404
    assert_clean_console(driver, "/v1/receivers")
