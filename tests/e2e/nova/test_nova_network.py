"""Servers on a network: herd's ``os.nova.server`` against the bed's real Neutron.

The bed's Neutron (``make neutron-bed``; tests/nova_bed/neutron.py) holds the shared network
``private`` with ``private-subnet`` (10.0.0.0/24); Nova makes, binds and deletes each server's
port through it. What exists is checked in Neutron's own port list, never through herd.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx
import pytest
from tests.e2e.nova.herd_api import IMAGE
from tests.nova_bed.bed import BedInfo
from tests.nova_bed.fixture import NovaCloud
from tests.nova_bed.neutron import CIDR, NETWORK
from tests.waiting import wait_for, wait_for_action

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def bed(nova_cloud: NovaCloud) -> BedInfo:
    if nova_cloud.info.neutron_missing:
        pytest.skip(nova_cloud.info.neutron_missing)
    return nova_cloud.info


@pytest.fixture(scope="module")
def cloud(nova_cloud: NovaCloud, bed: BedInfo) -> Any:
    return nova_cloud.connect()


def _node(herd: httpx.Client, name: str, properties: dict[str, Any]) -> dict[str, Any]:
    spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
    r = herd.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
    assert r.status_code == 201, r.text
    body = {"node": {"name": name, "profile_id": r.json()["profile"]["id"]}}
    r = herd.post("/v1/nodes", json=body)
    assert r.status_code == 202, r.text
    action = wait_for_action(herd, r.headers["Location"].rsplit("/", 1)[1], timeout=240)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    r = herd.get(f"/v1/nodes/{r.json()['node']['id']}", params={"show_details": "true"})
    return dict(r.json()["node"])


def _delete(herd: httpx.Client, node: dict[str, Any]) -> None:
    assert herd.delete(f"/v1/nodes/{node['id']}").status_code == 202
    wait_for(lambda: herd.get(f"/v1/nodes/{node['id']}").status_code == 404, timeout=120)


def test_server_on_the_private_network_has_its_port_in_the_details(
    herd: httpx.Client, cloud: Any, bed: BedInfo
) -> None:
    """senlin-tempest-plugin's spec: ``networks: [{network: private}]``."""
    node = _node(
        herd, "on-private", {"flavor": "1", "image": IMAGE, "networks": [{"network": NETWORK}]}
    )
    server_id = node["physical_id"]
    (address,) = node["details"]["addresses"][NETWORK]
    assert ipaddress.ip_address(address["addr"]) in ipaddress.ip_network(CIDR)
    (port,) = list(cloud.network.ports(device_id=server_id))
    assert port.network_id == bed.networks[NETWORK]
    assert [ip["ip_address"] for ip in port.fixed_ips] == [address["addr"]]
    assert port.mac_address == address["OS-EXT-IPS-MAC:mac_addr"]
    # bound by the bed's mechanism driver on the server's host (no agent)
    assert port.binding_host_id == cloud.compute.get_server(server_id).compute_host
    assert port.binding_vif_type == "other" and port.status == "ACTIVE"
    _delete(herd, node)
    wait_for(lambda: not list(cloud.network.ports(device_id=server_id)), timeout=120)


def test_fixed_ip_and_unknown_network(herd: httpx.Client, cloud: Any) -> None:
    networks = [{"network": NETWORK, "fixed_ip": "10.0.0.200"}]
    node = _node(herd, "fixed-ip", {"flavor": "1", "image": IMAGE, "networks": networks})
    assert [a["addr"] for a in node["details"]["addresses"][NETWORK]] == ["10.0.0.200"]
    _delete(herd, node)
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "1", "image": IMAGE, "networks": [{"network": "nonesuch"}]},
    }
    r = herd.post("/v1/profiles/validate", json={"profile": {"spec": spec}})
    assert r.status_code == 400, r.text
    assert "The specified network nonesuch could not be found." in r.json()["error"]["message"]
