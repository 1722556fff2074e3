"""``herd serve --auth keystone`` in front of a real Keystone (the bed of ``make keystone-bed``).

One Keystone for the module (it takes a minute or more to bootstrap on a busy machine),
with herd registered in its catalog as the ``clustering`` service exactly as docs/api.md
tells operators to. Keystone's own tokens, validated by keystonemiddleware with herd's
service user: a member sees its project only, a reader may read but not create, an admin
may use ``global_project``, a bad token is a 401, the webhook trigger needs no token, an
operator's policy file changes a rule, and ``openstack cluster list`` logs in with a
password and finds herd through the catalog.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.e2e.server import HerdServer, running_herd
from tests.keystone_bed import KeystoneBed, missing_reason, running_keystone
from tests.waiting import wait_for_action

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

OPENSTACK = str(Path(sys.executable).parent / "openstack")
SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {}}
FORBIDDEN = "You are not authorized to complete this operation."


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneBed]:
    with running_keystone(tmp_path_factory.mktemp("keystone")) as bed:
        yield bed


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed) -> Iterator[HerdServer]:
    with running_herd(tmp_path_factory.mktemp("herd") / "data", keystone.herd_env()) as server:
        # the docs' `openstack service create` / `openstack endpoint create` lines
        keystone.register_service("herd", "clustering", server.url)
        yield server


@pytest.fixture(scope="module")
def tokens(keystone: KeystoneBed) -> dict[str, str]:
    return {
        "alice": keystone.token("alice", "demo"),
        "rita": keystone.token("rita", "demo"),
        "bob": keystone.token("bob", "other"),
        "admin": keystone.token("admin", "admin"),
    }


def caller(herd: HerdServer, tokens: dict[str, str], name: str) -> httpx.Client:
    return httpx.Client(
        base_url=herd.url,
        headers={"X-Auth-Token": tokens[name], "OpenStack-API-Version": "clustering 1.14"},
        timeout=60,
    )


def make_cluster(alice: httpx.Client, name: str) -> dict[str, Any]:
    made = alice.post("/v1/profiles", json={"profile": {"name": f"{name}-p", "spec": SIM_SPEC}})
    assert made.status_code == 201, made.text
    profile = made.json()["profile"]
    made = alice.post(
        "/v1/clusters",
        json={"cluster": {"name": name, "profile_id": profile["id"], "desired_capacity": 1}},
    )
    assert made.status_code == 202, made.text
    wait_for_action(alice, made.headers["Location"].rsplit("/", 1)[-1])
    cluster: dict[str, Any] = made.json()["cluster"]
    return cluster


def test_bad_and_missing_tokens_are_401(herd: HerdServer) -> None:
    for headers in ({"X-Auth-Token": "not-a-keystone-token"}, {}):
        answer = httpx.get(f"{herd.url}/v1/clusters", headers=headers, timeout=60)
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == 401
        assert answer.json()["error"]["type"] == "Unauthorized"


def test_member_sees_its_project_only(
    herd: HerdServer, keystone: KeystoneBed, tokens: dict[str, str]
) -> None:
    alice, bob = caller(herd, tokens, "alice"), caller(herd, tokens, "bob")
    cluster = make_cluster(alice, "alices")
    assert cluster["project"] == keystone.projects["demo"]
    assert cluster["user"] == keystone.users["alice"].id
    assert [c["id"] for c in alice.get("/v1/clusters").json()["clusters"]] == [cluster["id"]]
    assert bob.get("/v1/clusters").json()["clusters"] == []
    assert bob.get(f"/v1/clusters/{cluster['id']}").status_code == 404
    assert bob.delete(f"/v1/clusters/{cluster['id']}").status_code == 404
    assert alice.get(f"/v1/clusters/{cluster['id']}").json()["cluster"]["status"] == "ACTIVE"


def test_reader_reads_but_cannot_change(herd: HerdServer, tokens: dict[str, str]) -> None:
    alice, rita = caller(herd, tokens, "alice"), caller(herd, tokens, "rita")
    cluster = make_cluster(alice, "readable")
    assert rita.get(f"/v1/clusters/{cluster['id']}").status_code == 200
    assert cluster["id"] in [c["id"] for c in rita.get("/v1/clusters").json()["clusters"]]
    refused = rita.post("/v1/profiles", json={"profile": {"name": "r", "spec": SIM_SPEC}})
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["message"] == FORBIDDEN
    assert rita.delete(f"/v1/clusters/{cluster['id']}").status_code == 403
    assert (
        rita.get("/v1/profiles").json()["profiles"] == alice.get("/v1/profiles").json()["profiles"]
    )


def test_global_project_is_for_admins(
    herd: HerdServer, keystone: KeystoneBed, tokens: dict[str, str]
) -> None:
    alice, bob = caller(herd, tokens, "alice"), caller(herd, tokens, "bob")
    admin = caller(herd, tokens, "admin")
    make_cluster(alice, "global-a")
    make_cluster(bob, "global-b")
    for member in (alice, bob):
        refused = member.get("/v1/clusters", params={"global_project": "true"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["message"] == FORBIDDEN
    listed = admin.get("/v1/clusters", params={"global_project": "true"})
    assert listed.status_code == 200, listed.text
    projects = {c["project"] for c in listed.json()["clusters"]}
    assert {keystone.projects["demo"], keystone.projects["other"]} <= projects
    assert admin.get("/v1/clusters").json()["clusters"] == []  # its own project: nothing
    assert admin.get("/v1/services").status_code == 200
    assert alice.get("/v1/services").status_code == 403


def test_webhook_trigger_needs_no_token(herd: HerdServer, tokens: dict[str, str]) -> None:
    alice = caller(herd, tokens, "alice")
    cluster = make_cluster(alice, "hooked")
    made = alice.post(
        "/v1/receivers",
        json={
            "receiver": {
                "name": "grow",
                "type": "webhook",
                "cluster_id": cluster["id"],
                "action": "CLUSTER_SCALE_OUT",
            }
        },
    )
    assert made.status_code == 201, made.text
    url = made.json()["receiver"]["channel"]["alarm_url"]
    triggered = httpx.post(url, timeout=60)
    assert triggered.status_code == 202, triggered.text
    wait_for_action(alice, triggered.json()["action"])
    assert alice.get(f"/v1/clusters/{cluster['id']}").json()["cluster"]["desired_capacity"] == 2


def test_operator_policy_file(
    tmp_path: Path, keystone: KeystoneBed, tokens: dict[str, str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"profiles:create": "rule:context_is_admin"\n')
    env = keystone.herd_env() | {"HERD_POLICY_FILE": str(policy)}
    with running_herd(tmp_path / "data", env) as server:
        alice = caller(server, tokens, "alice")
        body = {"profile": {"name": "p", "spec": SIM_SPEC}}
        refused = alice.post("/v1/profiles", json=body)
        assert refused.status_code == 403, refused.text
        assert alice.get("/v1/profiles").status_code == 200  # other rules keep their defaults
        assert caller(server, tokens, "admin").post("/v1/profiles", json=body).status_code == 201


def test_openstack_cli_finds_herd_in_the_catalog(
    herd: HerdServer, keystone: KeystoneBed, tokens: dict[str, str]
) -> None:
    cluster = make_cluster(caller(herd, tokens, "alice"), "from-cli")
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("OS_")
    } | keystone.openstack_env("alice", "demo")
    done = subprocess.run(
        [OPENSTACK, "cluster", "list", "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    # the CLI shortens ids to 8 characters
    assert cluster["id"][:8] in {row["id"] for row in listed}
    assert "from-cli" in {row["name"] for row in listed}
    env = env | keystone.openstack_env("bob", "other")
    done = subprocess.run(
        [OPENSTACK, "cluster", "list", "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "from-cli" not in {row["name"] for row in json.loads(done.stdout)}
