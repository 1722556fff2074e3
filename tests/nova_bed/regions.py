"""The bed's second region: RegionTwo, the same Nova reached through a second nova-api.

A real second region is a second Nova (its own API, cells, computes and Placement): about
1.3 GB more on a machine shared by many. What herd does per region is choose the endpoint
it sends a node's requests to (openstacksdk's ``region_name``), so the bed gives clouds.yaml
two regions whose compute endpoints are two nova-api processes of the one Nova. Both
regions see the same servers, hosts and zones; which region made, polled and deleted a
server shows in which nova-api logged its requests (``nova-api.log`` for RegionOne,
``nova-api-region2.log`` for RegionTwo). Glance, Placement and the network stand-in are
shared (one endpoint each, as a cloud's global services may be).
"""

from __future__ import annotations

from typing import Any

REGIONS = ("RegionOne", "RegionTwo")
#: the bed's service name and its log file's stem
API_SERVICE = "nova-api-region2"
#: key of its port in the bed's ports
API_PORT = "nova_api_region2"


def clouds_yaml_regions(second_compute_url: str) -> list[dict[str, Any]]:
    """openstacksdk's per-region values: RegionOne keeps the cloud's endpoints, RegionTwo's
    compute endpoint is the second nova-api."""
    return [
        {"name": REGIONS[0], "values": {}},
        {"name": REGIONS[1], "values": {"compute_endpoint_override": second_compute_url}},
    ]
