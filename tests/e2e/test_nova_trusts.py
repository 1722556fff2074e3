"""herd acts for the user on Nova through a Keystone trust (``nova_trusts``), on real beds.

One Keystone (``make keystone-bed``) for the module, the run's Nova bed (``make nova-bed``)
with one more nova-api that believes only that Keystone (``tests/nova_bed/keystone_api.py``,
registered in the catalog as ``compute``, the bed's Glance as ``image``), and one
``herd serve --auth keystone`` with ``HERD_NOVA_TRUSTS`` and no clouds.yaml at all: the
only way it has to reach Nova is the trust the API makes from the user.

carla, a member of project ``demo``, creates a Nova cluster through herd with her token:
the servers are in ``demo``, listed by carla's own openstacksdk against the Keystone
nova-api, absent from bob's list in ``other``; a scale-in deletes one through the trust.
Then carla's user is deleted, and alice (another member of ``demo``) scales out: the new
node fails with the reason naming carla's trust, and no server appears in any project.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.nova.herd_api import act, members_of
from tests.e2e.server import HerdServer
from tests.e2e.trusts import herd_as, scale_out_after_the_trustor_is_deleted
from tests.keystone_bed import PASSWORD, REGION, KeystoneBed, missing_reason
from tests.nova_bed.configs import not_installed_reason as nova_bed_missing
from tests.nova_bed.fixture import NovaCloud
from tests.nova_bed.keystone_api import start_keystone_nova_api
from tests.waiting import wait_for, wait_for_action

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.nova,
    pytest.mark.timeout(900),
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

PREFIX = "trust-e2e"
WAIT = 240.0


@dataclass
class Beds:
    keystone: KeystoneBed
    herd: HerdServer
    nova: NovaCloud
    compute_url: str


@pytest.fixture(scope="module")
def beds(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Beds]:
    reason = nova_bed_missing()
    if reason:
        pytest.skip(reason)
    keystone = KeystoneBed(tmp_path_factory.mktemp("keystone"), free_port())
    nova_api = None
    herd = None
    nova_cloud: NovaCloud | None = None
    try:
        # Keystone bootstraps while the run's Nova bed may still be starting (it starts in
        # the background after collection); then the nova-api boots
        keystone.start()
        nova_cloud = request.getfixturevalue("nova_cloud")
        assert nova_cloud is not None
        nova_api, compute_url = start_keystone_nova_api(
            nova_cloud.info, tmp_path_factory.mktemp("nova-api-keystone"), keystone.url,
            "admin", PASSWORD,
        )  # fmt: skip
        nova_api.wait_http(compute_url + "/")
        admin = keystone.token("admin", "admin")
        keystone.add_user(admin, "carla", "demo", "member")
        keystone.register_service("nova", "compute", compute_url)
        keystone.register_service("glance", "image", nova_cloud.info.image_url)
        herd = HerdServer(tmp_path_factory.mktemp("herd") / "data", free_port())
        # no OS_CLOUD, no clouds.yaml: the trusts are herd's only way to Nova
        herd.env = {**keystone.herd_env(), "HERD_NOVA_TRUSTS": "true", "HERD_NOVA_TIMEOUT": "120"}
        herd.start(timeout=180)
        yield Beds(keystone, herd, nova_cloud, compute_url)
    finally:
        if nova_cloud is not None:
            _remove_leftovers(nova_cloud)
        if herd is not None:
            herd.stop()
        if nova_api is not None:
            nova_api.stop()
        keystone.stop()


def _remove_leftovers(nova: NovaCloud) -> None:
    """The bed is the run's: delete this module's servers (as the bed's admin)."""
    conn = nova.connect()
    for server in conn.compute.servers(all_projects=True):
        if server.name.startswith(PREFIX):
            conn.compute.delete_server(server.id, ignore_missing=True)


def _openstack(beds: Beds, user: str, project: str) -> Any:
    """openstacksdk as ``user`` with a password: Keystone's catalog leads to its nova-api."""
    import openstack

    return openstack.connect(
        auth_url=beds.keystone.url,
        username=user,
        password=PASSWORD,
        project_name=project,
        user_domain_id="default",
        project_domain_id="default",
        region_name=REGION,
        load_yaml_config=False,
        load_envvars=False,
    )


def _trusts(keystone: KeystoneBed, admin: str) -> list[dict[str, Any]]:
    """carla's trusts, as Keystone's admin lists them."""
    answer = httpx.get(
        f"{keystone.url}/OS-TRUST/trusts",
        params={"trustor_user_id": keystone.users["carla"].id},
        headers={"X-Auth-Token": admin},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["trusts"])


def _ours(servers: Any) -> dict[str, Any]:
    return {s.id: s for s in servers if s.name.startswith(PREFIX) and s.status != "DELETED"}


def test_servers_are_the_users_and_a_deleted_user_stops_herd(beds: Beds) -> None:
    keystone = beds.keystone
    carla = herd_as(beds.herd.url, keystone.token("carla", "demo"))
    demo = keystone.projects["demo"]
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {
            "name": PREFIX,
            # ids, not names: each name lookup is one more request Nova validates with Keystone
            "flavor": beds.nova.info.flavors[beds.nova.flavor],
            "image": beds.nova.info.images[beds.nova.image],
        },
    }
    made = carla.post("/v1/profiles", json={"profile": {"name": PREFIX, "spec": spec}})
    assert made.status_code == 201, made.text
    profile = made.json()["profile"]
    assert profile["domain"] == "default"  # the project's domain, from the token

    body = {"cluster": {"name": PREFIX, "profile_id": profile["id"], "desired_capacity": 2}}
    made = carla.post("/v1/clusters", json=body)
    assert made.status_code == 202, made.text
    cluster = made.json()["cluster"]
    assert cluster["domain"] == "default"
    action = wait_for_action(carla, made.headers["Location"], timeout=WAIT)
    assert action["status"] == "SUCCEEDED", action

    members = members_of(carla, cluster["id"])
    assert [m["status"] for m in members] == ["ACTIVE", "ACTIVE"], members
    assert {m["domain"] for m in members} == {"default"}
    physical = {m["physical_id"] for m in members}

    # policies and receivers carry the requester's domain too
    deletion = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}
    made = carla.post("/v1/policies", json={"policy": {"name": PREFIX, "spec": deletion}})
    assert made.status_code == 201 and made.json()["policy"]["domain"] == "default", made.text
    receiver = {
        "name": PREFIX,
        "cluster_id": cluster["id"],
        "action": "CLUSTER_SCALE_OUT",
        "type": "webhook",
    }
    made = carla.post("/v1/receivers", json={"receiver": receiver})
    assert made.status_code == 201 and made.json()["receiver"]["domain"] == "default", made.text

    # carla's own openstacksdk, through Keystone's catalog, sees them in her project
    mine = _ours(_openstack(beds, "carla", "demo").compute.servers())
    assert set(mine) == physical
    assert {s.project_id for s in mine.values()} == {demo}
    assert {s.user_id for s in mine.values()} == {keystone.users["carla"].id}  # impersonation
    # bob, in project other, does not
    assert not _ours(_openstack(beds, "bob", "other").compute.servers())

    # the trust exists in Keystone
    admin = keystone.token("admin", "admin")
    first = _trusts(keystone, admin)
    assert len(first) == 1 and first[0]["project_id"] == demo and first[0]["impersonation"]

    # carla deletes it in Keystone; her next Nova cluster makes a new one, which her first
    # cluster acts through too (the scale-in below)
    gone = httpx.delete(
        f"{keystone.url}/OS-TRUST/trusts/{first[0]['id']}", headers=carla.headers, timeout=60
    )
    assert gone.status_code == 204, gone.text
    body = {"cluster": {"name": f"{PREFIX}-empty", "profile_id": profile["id"]}}
    made = carla.post("/v1/clusters", json=body)
    assert made.status_code == 202, made.text
    assert wait_for_action(carla, made.headers["Location"], timeout=WAIT)["status"] == "SUCCEEDED"
    second = _trusts(keystone, admin)
    assert len(second) == 1 and second[0]["id"] != first[0]["id"]

    # herd never shows a trust's id
    shown = [
        carla.get(f"/v1/clusters/{cluster['id']}").text,
        carla.get("/v1/nodes", params={"show_details": "true"}).text,
        carla.get("/v1/actions").text,
        carla.get("/v1/events").text,
    ]
    assert not any(t["id"] in text for t in first + second for text in shown)

    # scale-in deletes one server through the trust
    action = act(carla, cluster["id"], {"scale_in": {"count": 1}}, timeout=WAIT)
    assert action["status"] == "SUCCEEDED", action
    left = {m["physical_id"] for m in members_of(carla, cluster["id"])}
    assert len(left) == 1
    wait_for(
        lambda: set(_ours(_openstack(beds, "carla", "demo").compute.servers())) == left,
        timeout=WAIT,
        interval=1.0,
    )

    # carla's user is deleted: her trust is dead, and herd tries nothing else
    scale_out_after_the_trustor_is_deleted(keystone, beds.herd.url, cluster["id"], WAIT)

    # no server was made anywhere: every server of this module is the one left, in demo
    everywhere = _ours(beds.nova.connect().compute.servers(all_projects=True))
    assert set(everywhere) == left
    assert {s.project_id for s in everywhere.values()} == {demo}
    assert "no longer valid" in beds.herd.log.read_text()
