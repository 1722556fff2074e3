"""Making a cluster over HTTP, for tests of the API in process and of a real ``herd serve``."""

from __future__ import annotations

from typing import Any

import httpx
from tests.waiting import wait_for_action

SIM_SPEC: dict[str, Any] = {"type": "herd.sim", "version": "1.0", "properties": {}}


def create_cluster(
    client: httpx.Client,
    size: int,
    *,
    name: str = "c",
    spec: dict[str, Any] | None = None,
    profile_name: str = "p",
) -> str:
    """A profile (``spec``, a sim one by default) and a cluster of ``size`` members; its id.

    Returns once the creation action has succeeded. ``client`` is any httpx client of
    the API (a FastAPI ``TestClient`` or a client of a real server) whose headers pass.
    """
    r = client.post(
        "/v1/profiles", json={"profile": {"name": profile_name, "spec": spec or SIM_SPEC}}
    )
    assert r.status_code == 201, r.text
    r = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": name,
                "profile_id": r.json()["profile"]["id"],
                "desired_capacity": size,
            }
        },
    )
    assert r.status_code == 202, r.text
    action = wait_for_action(client, r.headers["Location"])
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    return str(r.json()["cluster"]["id"])
