"""Senlin's own profile types in a spec: a 400 naming herd's types, nothing stored."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import assert_error, mv

SUPPORTED = (
    "Supported types: herd.process-1.0, herd.sim-1.0, os.heat.stack-1.0, os.nova.server-1.0, "
    "os.nova.server-1.1, os.nova.server-1.2."
)


@pytest.mark.parametrize(
    ("spec", "full"),
    [
        (
            {"type": "os.nova.server", "version": "3.0", "properties": {"flavor": "m1"}},
            "os.nova.server-3.0",
        ),
        (
            {"type": "container.dockerinc.docker", "version": "1.0", "properties": {}},
            "container.dockerinc.docker-1.0",
        ),
    ],
)
def test_senlin_profile_type_is_400(client: TestClient, spec: dict[str, Any], full: str) -> None:
    message = (
        f"The specified profile type ({full}) is not supported. It is one of Senlin's OpenStack "
        "profile types, which herd does not provide: herd runs nodes as local processes, "
        f"simulated servers, Nova servers or Heat stacks. {SUPPORTED}"
    )
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 400, message, "InvalidSpec")
    r = client.post("/v1/profiles/validate", json={"profile": {"spec": spec}}, headers=mv("1.2"))
    assert_error(r, 400, message, "InvalidSpec")
    assert client.get("/v1/profiles").json()["profiles"] == []
    assert client.get("/v1/events").json()["events"] == []


MV_1_2 = {"OpenStack-API-Version": "clustering 1.2"}


def test_an_unknown_type_is_404(client: TestClient) -> None:
    """Senlin's ResourceNotFound for a type nobody provides (senlin-tempest-plugin's
    test_profile_create_profile_type_incorrect); a known type's unknown version stays 400."""
    spec = {"type": "my.thing", "version": "2.0", "properties": {}}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 404, "The profile_type 'my.thing-2.0' could not be found.")
    r = client.post("/v1/profiles/validate", json={"profile": {"spec": spec}}, headers=MV_1_2)
    assert_error(r, 404, "The profile_type 'my.thing-2.0' could not be found.")
    spec = {"type": "herd.sim", "version": "2.0", "properties": {}}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 400, f"The specified profile type (herd.sim-2.0) is not supported. {SUPPORTED}")


def test_a_nova_profile_without_a_cloud_is_400_saying_so(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validated like any spec, then checked against the cloud: here there is none."""
    for name in ("OS_CLOUD", "OS_AUTH_URL", "HERD_NOVA_CLOUD"):
        monkeypatch.delenv(name, raising=False)
    properties: dict[str, Any] = {"flavor": "m1"}
    spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(
        r, 400, "properties.image: Required spec item 'image' not provided (nor a boot device)"
    )
    properties["image"] = "cirros"
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert r.status_code == 400, r.text
    assert "no OpenStack cloud is configured: set HERD_NOVA_CLOUD" in r.text
    assert client.get("/v1/profiles").json()["profiles"] == []


def test_a_heat_profile_without_a_cloud_is_accepted_on_its_schema(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Senlin's profile create never asked Heat: with no cloud herd cannot either, so the
    schema decides; the stack create of a node is where Heat first sees the template."""
    for name in ("OS_CLOUD", "OS_AUTH_URL", "HERD_NOVA_CLOUD", "HERD_HEAT_CLOUD"):
        monkeypatch.delenv(name, raising=False)
    properties: dict[str, Any] = {"template": {}, "timeout": "soon"}
    spec = {"type": "os.heat.stack", "version": 1.0, "properties": properties}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 400, "properties.timeout: The value 'soon' is not a valid Integer")
    del properties["timeout"]
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 400, "properties.template: Both template and template_url are not specified")
    properties["template"] = {"heat_template_version": "2018-08-31", "resources": {}}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert r.status_code == 201, r.text
    assert r.json()["profile"]["type"] == "os.heat.stack-1.0"
    shown = client.get("/v1/profile-types/os.heat.stack-1.0").json()["profile_type"]
    assert shown["schema"]["disable_rollback"] == {
        "type": "Boolean",
        "description": "A boolean specifying whether a stack operation can be rolled back.",
        "default": True,
        "required": False,
        "updatable": True,
    }
