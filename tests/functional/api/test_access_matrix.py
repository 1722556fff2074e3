"""Project isolation and tokens, for EVERY route of the app (``auth: token``).

The routes are read from the app (``routes.app_routes``), not listed here: a new endpoint
is checked by the default expectation (a user operation: 401 without or with a bad token,
403 for an agent token, 404 for another project's resources named in its path or body),
and when that is not what it should do, the test fails until the endpoint's expectation is
declared below (open, admin-only, readable by agents, a path parameter's value) or in
``samples.py`` (a sample body). For every route:

* no token and an unknown token: 401 with Senlin's error body, except the open routes
  (each declared with the reason it is open);
* a member: 403 on the admin-only routes; an admin of the project passes them;
* an agent token: 403 on everything except the reads that regional agents make;
* a member (and an agent) of another project: 404 for every resource of project A named in
  the path, 400/404 "could not be found" for one named in the body, and no id of project A
  in any list; afterwards project A's resources and actions are exactly as they were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import DELETION_SPEC, SIM_SPEC, issue_token
from tests.functional.api.routes import RouteInfo, app_routes
from tests.functional.api.samples import sample_bodies
from tests.waiting import wait_for_action

from herd.api.auth import AGENT_REFUSED
from herd.config import Settings

MV = {"OpenStack-API-Version": "clustering 1.14"}
DOCS = "describes the API and holds no data"
DASHBOARD = "the dashboard's static shell; its data comes from /v1 with the user's own token"

#: routes that need no token, and why
OPEN: dict[tuple[str, str], str] = {
    ("GET", "/"): "version discovery comes before authentication (Senlin, keystoneauth)",
    ("GET", "/v1"): "version discovery comes before authentication (Senlin, keystoneauth)",
    ("GET", "/v1/"): "version discovery comes before authentication (Senlin, keystoneauth)",
    ("GET", "/v1/constants"): "the server's names and API version (enums), no project's data; "
    "the dashboard reads them before it has a token",
    ("GET", "/healthz"): "liveness probe of load balancers and supervisors; answers 'ok' only",
    ("GET", "/metrics"): "Prometheus scrapes without credentials; aggregate counts, no names",
    ("GET", "/openapi.json"): DOCS,
    ("GET", "/docs"): DOCS,
    ("GET", "/docs/oauth2-redirect"): DOCS,
    ("GET", "/redoc"): DOCS,
    ("GET", "/ui"): DASHBOARD,
    ("GET", "/ui/"): DASHBOARD,
    ("GET", "/ui/{page}"): DASHBOARD,
}
WEBHOOK = "the secret in the URL is the credential (alarm senders have no token); 404 without it"
OPEN[("POST", "/v1/webhooks/{receiver_id}/trigger")] = WEBHOOK
OPEN[("POST", "/v1/webhooks/{receiver_id}/alertmanager")] = WEBHOOK
OPEN_MOUNTS = {"/ui/static": DASHBOARD}

#: routes only an admin may call (members and agents get 403)
ADMIN_ONLY = {
    ("GET", "/v1/services"),
    ("GET", "/v1/deletions"),
    ("DELETE", "/v1/deletions/{resource_type}/{resource_id}"),
}

#: the reads a regional agent makes (docs/deletion.md); every other route refuses agents
AGENT_READS = {
    ("GET", "/v1/clusters"),
    ("GET", "/v1/clusters/{cluster_id}"),
    ("GET", "/v1/nodes"),
    ("GET", "/v1/nodes/{node_id}"),
    ("GET", "/v1/profiles"),
    ("GET", "/v1/profiles/{profile_id}"),
    ("GET", "/v1/policies"),
    ("GET", "/v1/policies/{policy_id}"),
}

#: path parameters naming a resource of a project, and the kind of resource
RESOURCE_PARAMS = {
    "cluster_id": "cluster",
    "node_id": "node",
    "profile_id": "profile",
    "policy_id": "policy",
    "action_id": "action",
    "event_id": "event",
    "receiver_id": "receiver",
}


@dataclass
class ProjectA:
    """Project A's resources, made through the API by its member, all actions ended."""

    ids: dict[str, str]

    def path(self, route: RouteInfo) -> str:
        values = {name: self.ids[kind] for name, kind in RESOURCE_PARAMS.items()}
        values.update(other_params(route, self.ids))
        missing = [p for p in route.params if p not in values]
        assert not missing, (
            f"{route}: declare a value for path parameter(s) {missing} in the access matrix"
        )
        return route.path.format(**{p: values[p] for p in route.params})

    def names_a_resource(self, route: RouteInfo) -> bool:
        return any(p in RESOURCE_PARAMS for p in route.params)


def other_params(route: RouteInfo, ids: dict[str, str]) -> dict[str, str]:
    """Values of path parameters that are not a project's resources."""
    type_name = "herd.sim-1.0" if "profile-types" in route.path else "senlin.policy.deletion-1.1"
    return {
        "type_name": type_name,
        "path": "status",
        "page": "clusters",
        "key": "owner",  # project A's cluster has this metadata key
        "resource_type": "cluster",
        "resource_id": ids["cluster"],
    }


def first_bodies(ids: dict[str, str]) -> dict[tuple[str, str], Any]:
    """The first sample body of each route that reads one (``samples.py``)."""
    return {route: bodies[0] for route, bodies in sample_bodies(ids).items()}


def _issue(client: TestClient, project: str, role: str) -> dict[str, str]:
    return {**issue_token(client, project, role), **MV}


@dataclass
class World:
    client: TestClient
    a: ProjectA
    headers: dict[str, dict[str, str]]  # "a-member", "a-admin", "a-agent", "b-member", ...
    routes: list[RouteInfo]
    bodies: dict[tuple[str, str], Any]

    def call(self, route: RouteInfo, who: str | None, *, body: Any = None) -> Any:
        headers = dict(MV)
        if who == "bad":
            headers["X-Auth-Token"] = "not-a-token"
        elif who is not None:
            headers = self.headers[who]
        payload = self.bodies.get((route.method, route.path))
        content = None if payload is None else json.dumps(payload)
        return self.client.request(
            route.method,
            self.a.path(route),
            headers={**headers, "Content-Type": "application/json"},
            content=content,
        )


def _build(client: TestClient) -> World:
    who = {
        f"{project}-{role}": _issue(client, project, role)
        for project, role in (
            ("pa", "member"),
            ("pa", "admin"),
            ("pa", "agent"),
            ("pb", "member"),
            ("pb", "agent"),
        )
    }
    a = who["pa-member"]
    r = client.post("/v1/profiles", json={"profile": {"name": "pa", "spec": SIM_SPEC}}, headers=a)
    assert r.status_code == 201, r.text
    profile = r.json()["profile"]["id"]
    r = client.post(
        "/v1/policies", json={"policy": {"name": "pa", "spec": DELETION_SPEC}}, headers=a
    )
    policy = r.json()["policy"]["id"]
    r = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": "ca",
                "profile_id": profile,
                "desired_capacity": 1,
                "metadata": {"owner": "a"},
            }
        },
        headers=a,
    )
    assert r.status_code == 202, r.text
    cluster = r.json()["cluster"]["id"]
    create = r.headers["Location"]
    assert wait_for_action(client, create, headers=a)["status"] == "SUCCEEDED"
    r = client.post(
        f"/v1/clusters/{cluster}/actions",
        json={"policy_attach": {"policy_id": policy}},
        headers=a,
    )
    assert wait_for_action(client, r.headers["Location"], headers=a)["status"] == "SUCCEEDED"
    (node,) = client.get("/v1/nodes", params={"cluster_id": cluster}, headers=a).json()["nodes"]
    r = client.post(
        "/v1/receivers",
        json={
            "receiver": {
                "name": "ra",
                "type": "webhook",
                "cluster_id": cluster,
                "action": "CLUSTER_SCALE_OUT",
            }
        },
        headers=a,
    )
    assert r.status_code == 201, r.text
    receiver = r.json()["receiver"]["id"]
    events = client.get("/v1/events", headers=a).json()["events"]
    ids = {
        "profile": profile,
        "policy": policy,
        "cluster": cluster,
        "node": node["id"],
        "action": create.rsplit("/", 1)[1],
        "event": events[0]["id"],
        "receiver": receiver,
    }
    routes, _mounts = app_routes(client.app)  # type: ignore[arg-type]
    return World(client, ProjectA(ids), who, routes, first_bodies(ids))


@pytest.fixture
def world(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> World:
    settings = Settings(data_dir=tmp_path / "data", db_url=db_url, auth="token")
    return _build(api_client(settings, start_engine=True))


def _senlin_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, f"{response.status_code}: {response.text[:300]}"
    body = response.json()
    assert body["code"] == status and body["error"]["code"] == status, body
    assert body["title"] and "explanation" in body and body["error"]["type"], body
    return dict(body["error"])


def _every(world: World, check: Callable[[RouteInfo], None]) -> None:
    """Run ``check`` on every route; report every failing route at once."""
    failures = []
    for route in world.routes:
        try:
            check(route)
        except AssertionError as exc:
            failures.append(f"{route}: {exc}")
    assert not failures, "\n".join(failures)


def _snapshot(world: World) -> Any:
    """Project A as its admin sees it: every resource and every action."""
    admin = world.headers["pa-admin"]
    return {
        kind: sorted(
            json.dumps(item, sort_keys=True)
            for item in world.client.get(f"/v1/{kind}", headers=admin).json()[kind]
        )
        for kind in ("profiles", "policies", "clusters", "nodes", "actions", "receivers")
    }


def test_every_route_has_a_declared_or_default_expectation(world: World) -> None:
    """The declarations name only routes that exist, and every body route has a sample."""
    served = {(r.method, r.path) for r in world.routes}
    stale = (set(OPEN) | ADMIN_ONLY | AGENT_READS | set(world.bodies)) - served
    assert not stale, f"declared for routes the app does not serve: {sorted(stale)}"
    document = world.client.get("/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation and path.startswith("/v1/"):
                assert (method.upper(), path) in world.bodies, (
                    f"{method.upper()} {path} reads a body: add a sample to samples.py"
                )
    _, mounts = app_routes(world.client.app)  # type: ignore[arg-type]
    assert {m.path for m in mounts} == set(OPEN_MOUNTS), "declare every mount in OPEN_MOUNTS"


def test_no_token_and_a_bad_token_are_401(world: World) -> None:
    def check(route: RouteInfo) -> None:
        for who in (None, "bad"):
            r = world.call(route, who)
            if (route.method, route.path) in OPEN:
                assert r.status_code not in (401, 403), f"open route answered {r.status_code}"
                assert r.status_code < 500, r.text[:300]
            else:
                error = _senlin_error(r, 401)
                assert error["type"] == "Unauthorized"

    _every(world, check)
    for mount in app_routes(world.client.app)[1]:  # type: ignore[arg-type]
        assert mount.directory is not None
        asset = next(p for p in sorted(mount.directory.rglob("*")) if p.is_file())
        url = f"{mount.path}/{asset.relative_to(mount.directory)}"
        assert world.client.get(url).status_code == 200, url


def test_agent_tokens_only_read(world: World) -> None:
    def check(route: RouteInfo) -> None:
        if (route.method, route.path) in OPEN:
            return
        r = world.call(route, "pa-agent")
        if (route.method, route.path) in AGENT_READS:
            assert r.status_code == 200, r.text[:300]
        else:
            error = _senlin_error(r, 403)
            if (route.method, route.path) not in ADMIN_ONLY:
                assert error["message"] == AGENT_REFUSED

    before = _snapshot(world)
    _every(world, check)
    assert _snapshot(world) == before


def test_members_cannot_do_admin_operations(world: World) -> None:
    def check(route: RouteInfo) -> None:
        if (route.method, route.path) not in ADMIN_ONLY:
            return
        error = _senlin_error(world.call(route, "pa-member"), 403)
        assert error["type"] == "Forbidden"
        if route.method == "GET":  # an admin passes (writes are left alone: they purge)
            assert world.call(route, "pa-admin").status_code == 200

    before = _snapshot(world)
    _every(world, check)
    assert _snapshot(world) == before
    assert any((r.method, r.path) in ADMIN_ONLY for r in world.routes)


def test_another_projects_resources_are_404(world: World) -> None:
    ids = set(world.a.ids.values())

    def check(route: RouteInfo) -> None:
        key = (route.method, route.path)
        if key in OPEN or key in ADMIN_ONLY:
            return
        callers = ["pb-member"] + (["pb-agent"] if key in AGENT_READS else [])
        body_names_a = any(i in json.dumps(world.bodies.get(key)) for i in ids)
        for who in callers:
            r = world.call(route, who)
            if world.a.names_a_resource(route):
                _senlin_error(r, 404)
            elif body_names_a:
                assert r.status_code in (400, 404), r.text[:300]
                assert "could not be found" in r.json()["error"]["message"]
            elif route.method == "GET":
                assert r.status_code == 200, r.text[:300]
                leaked = [i for i in ids if i in r.text]
                assert not leaked, f"project A's ids in the answer: {leaked}"

    before = _snapshot(world)
    _every(world, check)
    # Nothing of project A changed, and nothing was started on it.
    assert _snapshot(world) == before


def test_project_a_reads_its_own_resources(world: World) -> None:
    """The control: the same paths answer 200 to project A's member."""

    def check(route: RouteInfo) -> None:
        key = (route.method, route.path)
        if route.method != "GET" or key in OPEN or key in ADMIN_ONLY:
            return
        r = world.call(route, "pa-member")
        assert r.status_code == 200, r.text[:300]

    _every(world, check)
    listed = world.client.get("/v1/clusters", headers=world.headers["pa-member"]).json()
    assert [c["id"] for c in listed["clusters"]] == [world.a.ids["cluster"]]
