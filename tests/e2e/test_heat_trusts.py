"""herd acts for the user on Heat through a Keystone trust (``nova_trusts``), on real beds.

One Keystone (``make keystone-bed``) and one Heat (``make heat-bed``, which validates
Keystone tokens itself) for the module, and one ``herd serve --auth keystone`` with
``HERD_NOVA_TRUSTS`` and no clouds.yaml at all: the only way it has to reach Heat is the
trust the API makes from the user.

carla, a member of project ``demo``, creates a cluster of ``os.heat.stack`` members with
her token: the stacks are in ``demo``, listed by carla's own token in Heat, absent from
bob's list in ``other`` (and his read of one is refused); a scale-in deletes one through
the trust. Then carla's user is deleted, and alice (another member of ``demo``) scales
out: the new node fails with the reason naming carla's trust (user and project), and no
stack appears in Heat.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.nova.herd_api import act, members_of
from tests.e2e.server import HerdServer, running_herd
from tests.e2e.trusts import herd_as, scale_out_after_the_trustor_is_deleted
from tests.heat_bed import HeatBed, missing_reason, running_heat
from tests.keystone_bed import KeystoneBed
from tests.postgres import PgServer
from tests.waiting import wait_for_action

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.timeout(900),
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

WAIT = 300.0  # stacks on a busy two-core machine

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"random": {"type": "OS::Heat::RandomString", "properties": {"length": 8}}},
}


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneBed]:
    bed = KeystoneBed(tmp_path_factory.mktemp("keystone"), free_port())
    try:
        bed.start()
        bed.add_user(bed.token("admin", "admin"), "carla", "demo", "member")
        yield bed
    finally:
        bed.stop()


@pytest.fixture(scope="module")
def heat(
    tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed, pg_server: PgServer
) -> Iterator[HeatBed]:
    with running_heat(tmp_path_factory.mktemp("heat"), keystone, pg_server) as bed:
        yield bed


@pytest.fixture(scope="module")
def herd(
    tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed, heat: HeatBed
) -> Iterator[HerdServer]:
    # no OS_CLOUD, no clouds.yaml: the trusts are herd's only way to Heat
    env = {**keystone.herd_env(), "HERD_NOVA_TRUSTS": "true", "HERD_NOVA_TIMEOUT": "300"}
    with running_herd(tmp_path_factory.mktemp("herd") / "data", env) as server:
        yield server


def _heat(heat: HeatBed, keystone: KeystoneBed, user: str, project: str) -> httpx.Client:
    """Heat's API as ``user`` with their own token, in ``project``."""
    return httpx.Client(
        base_url=f"{heat.url}/v1/{keystone.projects[project]}",
        headers={"X-Auth-Token": keystone.token(user, project)},
        timeout=120,
        follow_redirects=True,
    )


def _stacks(client: httpx.Client) -> dict[str, dict[str, Any]]:
    answer = client.get("/stacks")
    assert answer.status_code == 200, answer.text
    return {s["id"]: s for s in answer.json()["stacks"]}


def test_stacks_are_the_users_and_a_refused_trust_fails_the_action(
    keystone: KeystoneBed, heat: HeatBed, herd: HerdServer
) -> None:
    carla = herd_as(herd.url, keystone.token("carla", "demo"), timeout=120)
    demo = keystone.projects["demo"]
    spec = {"type": "os.heat.stack", "version": "1.0", "properties": {"template": TEMPLATE}}
    made = carla.post("/v1/profiles", json={"profile": {"name": "trusted", "spec": spec}})
    assert made.status_code == 201, made.text
    body = {"cluster": {"name": "trusted", "profile_id": made.json()["profile"]["id"]}}
    body["cluster"]["desired_capacity"] = 2
    made = carla.post("/v1/clusters", json=body)
    assert made.status_code == 202, made.text
    cluster = made.json()["cluster"]["id"]
    action = wait_for_action(carla, made.headers["Location"], timeout=WAIT)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    members = members_of(carla, cluster)
    assert [m["status"] for m in members] == ["ACTIVE", "ACTIVE"], members
    physical = {m["physical_id"] for m in members}

    # carla's own token sees them in Heat, in her project, made as her (impersonation)
    in_demo = _heat(heat, keystone, "carla", "demo")
    mine = _stacks(in_demo)
    assert set(mine) == physical
    for stack_id in physical:
        shown = in_demo.get(f"/stacks/{stack_id}")
        assert shown.status_code == 200, shown.text
        assert shown.json()["stack"]["stack_owner"] == "carla"
        assert all(f"/v1/{demo}/" in link["href"] for link in shown.json()["stack"]["links"])
    # bob, in project other, neither lists them nor reads one
    in_other = _heat(heat, keystone, "bob", "other")
    assert _stacks(in_other) == {}
    stack_id = next(iter(physical))
    refused = in_other.get(f"/stacks/{mine[stack_id]['stack_name']}/{stack_id}")
    assert refused.status_code in (403, 404), refused.text

    # a scale-in deletes one stack through the trust
    action = act(carla, cluster, {"scale_in": {"count": 1}}, timeout=WAIT)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    [kept] = members_of(carla, cluster)
    assert set(_stacks(in_demo)) == {kept["physical_id"]}

    # carla's user is deleted: Keystone refuses her trust, and herd tries nothing else
    scale_out_after_the_trustor_is_deleted(keystone, herd.url, cluster, WAIT)
    # no stack was made: demo holds the one kept, other none
    assert set(_stacks(_heat(heat, keystone, "alice", "demo"))) == {kept["physical_id"]}
    assert _stacks(in_other) == {}
