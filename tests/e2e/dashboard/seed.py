"""A real ``herd serve`` holding what the dashboard shows: clusters, a deletion policy, a waiting
lifecycle hook, a stuck deletion with a regional copy, an unhealthy member, scale history.

Everything goes through the public HTTP API of the running server, except the regional copy,
which is written into the region's own store as a regional agent would (no agent runs here).
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tests.conftest import free_port
from tests.e2e.server import HerdServer

from herd.config import RegionConfig

MV = {"OpenStack-API-Version": "clustering 1.14"}


def sim_spec(**properties: Any) -> dict[str, Any]:
    return {"type": "herd.sim", "version": "1.0", "properties": properties}


def deletion_spec(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.deletion", "version": "1.1", "properties": properties}


class HookReceiver:
    """A real local webhook endpoint that accepts hook messages and never answers CONTINUE."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        received = self.messages

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                received.append(json.loads(self.rfile.read(length) or b"{}"))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"{what} not met within {timeout}s")
        time.sleep(0.1)


@dataclass
class Seeded:
    url: str
    client: httpx.Client
    web: str  # cluster ids
    hooked: str
    doomed: str
    unhealthy_node: str
    unhealthy_name: str
    region_names: list[str]
    notes: dict[str, Any] = field(default_factory=dict)

    def action_done(self, location: str) -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            action = self.client.get(location).json()["action"]
            return action if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") else None

        result: dict[str, Any] = wait_for(done, what=f"action {location}")
        return result

    def members(self, cluster: str) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = self.client.get(
            "/v1/nodes", params={"cluster_id": cluster, "sort": "index:asc"}
        ).json()["nodes"]
        return nodes


def _post(client: httpx.Client, path: str, body: dict[str, Any], status: int = 202) -> Any:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    return response


def _create_cluster(client: httpx.Client, name: str, profile: str, size: int) -> tuple[str, str]:
    r = _post(
        client,
        "/v1/clusters",
        {"cluster": {"name": name, "profile_id": profile, "desired_capacity": size}},
    )
    return r.json()["cluster"]["id"], r.headers["Location"]


@contextmanager
def seeded_server(base: Path, hook_url: str) -> Iterator[Seeded]:
    region = RegionConfig(name="R1", url=f"sqlite:///{base / 'R1.db'}")
    server = HerdServer(
        base / "data",
        free_port(),
        HERD_REGIONS=json.dumps([region.model_dump()]),
        HERD_DELETION_STUCK_AFTER="0",
    )
    server.start()
    client = httpx.Client(base_url=server.url, headers=MV, timeout=30)
    seeded: Seeded | None = None
    try:
        seeded = _seed(server.url, client, base, hook_url, region)
        yield seeded
    finally:
        if seeded is not None:
            release_hooks(seeded)
        client.close()
        server.stop()


def release_hooks(s: Seeded) -> None:
    """Answer the waiting hooks (CONTINUE) so the server stops without a thread waiting an hour."""
    waiting = s.client.get(
        "/v1/actions", params={"cluster_id": s.hooked, "status": "WAITING_LIFECYCLE_COMPLETION"}
    ).json()["actions"]
    for child in waiting:
        s.client.post(
            f"/v1/clusters/{s.hooked}/actions",
            json={"complete_lifecycle": {"lifecycle_action_token": child["id"]}},
        )
    if "hooked_action" in s.notes:
        s.action_done(f"/v1/actions/{s.notes['hooked_action']}")


def _seed(
    url: str, client: httpx.Client, base: Path, hook_url: str, region: RegionConfig
) -> Seeded:
    def profile(name: str, spec: dict[str, Any]) -> str:
        return str(
            _post(client, "/v1/profiles", {"profile": {"name": name, "spec": spec}}, 201).json()[
                "profile"
            ]["id"]
        )

    def policy(name: str, spec: dict[str, Any]) -> str:
        return str(
            _post(client, "/v1/policies", {"policy": {"name": name, "spec": spec}}, 201).json()[
                "policy"
            ]["id"]
        )

    sim = profile("sim", sim_spec(create_latency=0.02, zone="zone-a", region="RegionOne"))
    broken = profile("sim-undeletable", sim_spec(delete_failure_rate=1))
    oldest = policy("oldest-first", deletion_spec(criteria="OLDEST_FIRST", grace_period=1))
    hooked_policy = policy(
        "wait-for-drain",
        deletion_spec(hooks={"type": "webhook", "timeout": 3600, "params": {"url": hook_url}}),
    )
    seeded_ids = {}
    locations = {}
    for name, prof, size in (("web", sim, 4), ("hooked", sim, 3), ("doomed", broken, 1)):
        seeded_ids[name], locations[name] = _create_cluster(client, name, prof, size)
    s = Seeded(
        url, client, seeded_ids["web"], seeded_ids["hooked"], seeded_ids["doomed"], "", "", ["R1"]
    )
    for name in locations:
        assert s.action_done(locations[name])["status"] == "SUCCEEDED"
    for cluster, pol in ((s.web, oldest), (s.hooked, hooked_policy)):
        r = _post(client, f"/v1/clusters/{cluster}/actions", {"policy_attach": {"policy_id": pol}})
        assert s.action_done(r.headers["Location"])["status"] == "SUCCEEDED"

    # web: grow, mark one member unhealthy, shrink: the unhealthy one goes first, then the oldest.
    r = _post(client, f"/v1/clusters/{s.web}/actions", {"scale_out": {"count": 2}})
    assert s.action_done(r.headers["Location"])["status"] == "SUCCEEDED"
    members = s.members(s.web)
    marked = members[2]
    r = client.patch(
        f"/v1/clusters/{s.web}/nodes/{marked['id']}",
        json={"mark_unhealthy": True, "resource_status_reason": "app reports 503 on /ready"},
    )
    assert r.status_code == 200, r.text
    r = _post(client, f"/v1/clusters/{s.web}/actions", {"scale_in": {"count": 2}})
    scale_in = s.action_done(r.headers["Location"])
    assert scale_in["status"] == "SUCCEEDED", scale_in
    s.notes["scale_in"] = scale_in
    s.notes["first_victim"] = marked["name"]
    # A member marked unhealthy that stays (shown in the members table and the health page).
    stays = s.members(s.web)[-1]
    r = client.patch(
        f"/v1/clusters/{s.web}/nodes/{stays['id']}",
        json={"mark_unhealthy": True, "resource_status_reason": "disk latency above 2 s"},
    )
    assert r.status_code == 200, r.text
    s.unhealthy_node, s.unhealthy_name = stays["id"], stays["name"]

    # hooked: a scale-in whose webhook receiver never answers CONTINUE keeps waiting.
    r = _post(client, f"/v1/clusters/{s.hooked}/actions", {"scale_in": {"count": 1}})
    s.notes["hooked_action"] = r.headers["Location"].rsplit("/", 1)[1]

    def waiting() -> bool:
        listed = client.get(
            "/v1/actions", params={"cluster_id": s.hooked, "status": "WAITING_LIFECYCLE_COMPLETION"}
        ).json()["actions"]
        return bool(listed)

    wait_for(waiting, what="a child waiting for its lifecycle hook")

    # doomed: a regional copy in R1, then a deletion that fails (the driver cannot delete).
    from herd.config import Settings
    from herd.regions import RegionalCopy, Regions

    regions = Regions.from_settings(Settings(data_dir=base / "data", regions=[region]))
    try:
        backend = regions.backends["R1"]
        backend.create_from(
            s.doomed, lambda: RegionalCopy(s.doomed, "doomed", "default", 0, "test"), "test"
        )
    finally:
        regions.close()
    r = client.delete(f"/v1/clusters/{s.doomed}")
    assert r.status_code == 202, r.text
    failed = s.action_done(r.headers["Location"])
    assert failed["status"] == "FAILED", failed

    def stuck() -> bool:
        items = client.get("/v1/deletions").json()["deletions"]
        return any(i["resource_id"] == s.doomed and i["status"] == "ERROR" for i in items)

    wait_for(stuck, what="the failed deletion's tombstone in ERROR")
    return s
