"""``/openapi.json`` describes every request body with its model and every view with its type
(the fuzzing tests need it), from the routes' own types."""

from __future__ import annotations

import copy
import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from tests.functional.api.helpers import SIM_SPEC
from tests.unit.planner.factory import template_cluster

import herd.api.routers
from herd.errors import MalformedRequest
from herd.planner.codec import parse_request
from herd.planner.model import RequestType


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["$ref"]] if "$ref" in schema else []
        for value in schema.values():
            found += _refs(value)
        return found
    if isinstance(schema, list):
        return [ref for item in schema for ref in _refs(item)]
    return []


def _routes_with_a_body() -> list[tuple[str, str]]:
    """(path, method) of every route in herd's routers whose endpoint reads a body."""
    found = []
    for info in pkgutil.iter_modules(herd.api.routers.__path__):
        module = importlib.import_module(f"herd.api.routers.{info.name}")
        router = getattr(module, "router", None)  # spec_resources builds routers for others
        for route in router.routes if router is not None else ():
            if isinstance(route, APIRoute) and route.body_field is not None:
                found += [(route.path, method.lower()) for method in route.methods or ()]
    return found


def test_every_operation_with_a_body_has_a_request_schema(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    components = document["components"]["schemas"]
    with_body = _routes_with_a_body()
    assert len(with_body) >= 16
    for path, method in with_body:
        operation = document["paths"][path][method]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        refs = _refs(schema)
        assert refs, f"{method.upper()} {path} has no request model"
        for ref in refs:
            name = ref.rsplit("/", 1)[-1]
            assert name in components, f"{method.upper()} {path}: {name} missing"
            assert components[name].get("properties") is not None or name.endswith("Params")


def test_request_models_forbid_unknown_keys_in_the_document(client: TestClient) -> None:
    components = client.get("/openapi.json").json()["components"]["schemas"]
    assert components["ClusterCreate"]["additionalProperties"] is False
    assert set(components["ClusterCreate"]["required"]) == {"name", "profile_id"}
    assert "scale_in" in components["ClusterActionRequest"]["properties"]


def test_no_route_hand_feeds_its_request_body() -> None:
    """The request bodies come from the routes' body dependencies, not from ``openapi_extra``;
    a route that reads its body as bytes (no body dependency: the iallocator request, read
    by the planner's parser) states the parser's schema there."""
    for info in pkgutil.iter_modules(herd.api.routers.__path__):
        module = importlib.import_module(f"herd.api.routers.{info.name}")
        router = getattr(module, "router", None)
        for route in router.routes if router is not None else ():
            if isinstance(route, APIRoute) and route.body_field is not None:
                assert "requestBody" not in (route.openapi_extra or {}), route.path


def test_views_are_documented_from_their_types(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    components = document["components"]["schemas"]

    def answer(path: str, method: str, status: str) -> dict[str, Any]:
        content = document["paths"][path][method]["responses"][status]["content"]
        schema: dict[str, Any] = content["application/json"]["schema"]
        return schema

    node = answer("/v1/nodes/{node_id}", "get", "200")
    assert node["required"] == ["node"]
    assert node["properties"]["node"] == {"$ref": "#/components/schemas/NodeView"}
    listed = answer("/v1/clusters", "get", "200")["properties"]["clusters"]
    assert listed == {"type": "array", "items": {"$ref": "#/components/schemas/ClusterView"}}
    assert answer("/v1/clusters", "post", "202")["properties"]["cluster"]["$ref"].endswith(
        "/ClusterView"
    )
    # the schema is the TypedDict's: always-there keys are required, the others are not
    view = components["NodeView"]
    assert {"id", "status", "health", "last_check_result"} <= set(view["required"])
    assert "tainted" not in view["required"] and "details" not in view["required"]
    assert "nodes" not in components["ClusterView"]["required"]
    assert view["properties"]["physical_id"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    for name in ("ProfileView", "PolicyView", "ActionView", "EventView", "ReceiverView"):
        assert name in components
    mark = answer("/v1/clusters/{cluster_id}/nodes/{node_id}", "patch", "200")
    assert mark == {"$ref": "#/components/schemas/MarkAnswer"}


def test_constants_are_the_servers_names(client: TestClient) -> None:
    """``GET /v1/constants`` needs no token and names what the server's enums hold."""
    response = client.get("/v1/constants", headers={"X-Auth-Token": ""})
    assert response.status_code == 200
    constants = response.json()["constants"]
    assert constants["api"] == {"min_version": "1.0", "max_version": "1.14"}
    assert "CLUSTER_SCALE_OUT" in constants["cluster_action_names"]
    assert all(name.startswith("CLUSTER_") for name in constants["cluster_action_names"])
    assert set(constants["cluster_action_names"]) < set(constants["action_names"])
    assert "CLUSTER_CREATE" not in constants["receiver_action_names"]
    assert "CHECK_FAILED" in constants["health_statuses"]
    assert "HEALTHY" not in constants["health_statuses"]
    assert constants["adjustment_types"] == [
        "EXACT_CAPACITY",
        "CHANGE_IN_CAPACITY",
        "CHANGE_IN_PERCENTAGE",
    ]


def test_the_document_states_what_herd_checks(client: TestClient) -> None:
    """What the field types check is in the document (bounds, lengths, enums, no NUL), so
    Schemathesis' positive_data_acceptance holds (test_fuzz_openapi.py)."""
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    create = schemas["ClusterCreate"]
    assert create["properties"]["max_size"]["minimum"] == -1
    assert create["properties"]["timeout"]["maximum"] == 604800
    assert create["properties"]["name"]["pattern"] == r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
    assert create["properties"]["profile_id"]["pattern"] == r"^[^\u0000]*$"
    assert schemas["ScaleOutParams"]["properties"]["count"]["minimum"] == 1
    assert schemas["ReceiverCreate"]["properties"]["type"]["enum"] == ["webhook"]
    assert set(schemas["ReceiverCreate"]["required"]) == {"name", "type", "cluster_id", "action"}
    assert set(schemas["ProfileCreate"]["required"]) == {"name", "spec"}
    assert schemas["NodesParams"]["required"] == ["nodes"]
    assert schemas["ActionUpdate"]["properties"]["status"]["enum"] == ["CANCELLED"]
    # a key whose {} misses a required field may not be null (null reads as {})
    actions = schemas["ClusterActionRequest"]["properties"]
    assert {"type": "null"} not in actions["policy_attach"]["anyOf"]
    assert {"type": "null"} in actions["scale_out"]["anyOf"]
    assert schemas["ValidatedProfileView"]["properties"]["id"] == {"title": "Id", "type": "null"}
    query = {
        p["name"]: p["schema"]
        for p in document["paths"]["/v1/clusters"]["get"]["parameters"]
        if p["in"] == "query"
    }
    assert query["marker"]["pattern"].startswith("^([0-9a-f]{8}")
    assert "ACTIVE" in query["status"]["enum"]
    assert query["show_nodes"] == {"type": "boolean"}


GANETI_DATA = Path("/usr/share/ganeti/testsuite/test/data/htools")


def _relocation_body_schema(client: TestClient) -> Any:
    operation = client.get("/openapi.json").json()["paths"]["/v1/relocation-plans"]["post"]
    body = operation["requestBody"]
    assert body["required"] is True
    return body["content"]["application/json"]["schema"]


def test_the_relocation_body_is_the_iallocator_request(client: TestClient) -> None:
    """``POST /v1/relocation-plans`` documents Ganeti's iallocator message as the parser
    reads it: what herd's tests send is valid, a request the parser refuses is not."""
    schema = _relocation_body_schema(client)
    assert set(schema["required"]) == {"request", "nodegroups", "nodes", "instances"}
    kinds = {
        option["properties"]["type"]["const"] for option in schema["properties"]["request"]["oneOf"]
    }
    assert kinds == {t.value for t in RequestType}
    validator = jsonschema_rs.validator_for(schema)
    for request in (
        {"type": "node-evacuate", "evac_mode": "all", "instances": ["i-drbd"]},
        {"type": "change-group", "instances": ["i-plain"], "target_groups": ["g2"]},
    ):
        message = template_cluster(request)
        validator.validate(message)
        parse_request(message)  # the parser takes it too
        bad = {**message, "request": {**request, "instances": "i-drbd"}}
        assert not validator.is_valid(bad)
        with pytest.raises(MalformedRequest):
            parse_request(bad)
    offline = copy.deepcopy(template_cluster({"type": "allocate-secondary", "name": "i-drbd"}))
    del offline["nodes"]["n4"]["total_memory"]  # a live node must report its figures
    assert not validator.is_valid(offline)
    offline["nodes"]["n4"]["vm_capable"] = None  # null reads as true: still live
    assert not validator.is_valid(offline)
    offline["nodes"]["n4"]["vm_capable"] = False  # Ganeti does not query such a node
    validator.validate(offline)
    offline["nodes"]["n4"]["vm_capable"] = True
    offline["nodes"]["n4"]["offline"] = True  # nor an offline one
    validator.validate(offline)
    parse_request(offline)
    for cpus in (0.5, -1, 5e-268):  # a CPU count is whole and not negative: both refuse
        fraction = copy.deepcopy(offline)
        fraction["nodes"]["n1"]["total_cpus"] = cpus
        assert not validator.is_valid(fraction)
        with pytest.raises(MalformedRequest, match=r"^nodes\.n1\.total_cpus: a count of CPUs"):
            parse_request(fraction)


@pytest.mark.skipif(
    not GANETI_DATA.is_dir(),
    reason=f"Ganeti test data not installed ({GANETI_DATA}; apt ganeti-testsuite)",
)
def test_ganetis_iallocator_messages_fit_the_relocation_body(client: TestClient) -> None:
    """Every request of Ganeti's own test data fits the schema exactly when herd's parser
    reads it (hail-invalid-reloc.json is the one that does not)."""
    validator = jsonschema_rs.validator_for(_relocation_body_schema(client))
    files = sorted(GANETI_DATA.glob("hail-*.json"))
    assert len(files) >= 10
    for path in files:
        message = json.loads(path.read_text())
        try:
            parse_request(message)
        except MalformedRequest:
            parsed = False
        else:
            parsed = True
        assert validator.is_valid(message) is parsed, path.name


def test_the_document_says_what_the_fuzz_found_herd_accepts(client: TestClient) -> None:
    """Four things herd does that the document once said otherwise (other fuzz draws found
    them: ``HERD_FUZZ_SEED``); each is checked in the document and in an answer."""
    document = client.get("/openapi.json").json()
    paths, components = document["paths"], document["components"]["schemas"]
    # beside its envelope a body may hold other keys, ignored as Senlin did
    create = paths["/v1/profiles"]["post"]["requestBody"]["content"]["application/json"]
    assert create["schema"]["additionalProperties"] is True
    body = {"profile": {"name": "extra", "spec": SIM_SPEC}, "other": {"x": 1}}
    assert client.post("/v1/profiles", json=body).status_code == 201
    # an empty filter is no filter
    status = next(p for p in paths["/v1/clusters"]["get"]["parameters"] if p["name"] == "status")
    assert "" in status["schema"]["enum"]
    assert client.get("/v1/clusters", params={"status": ""}).status_code == 200
    # an empty replacement map is refused, as the document says
    assert components["ReplaceNodesParams"]["properties"]["nodes"]["minProperties"] == 1
    refused = client.post(
        "/v1/clusters/c/actions",
        json={"replace_nodes": {"nodes": {}}},
        headers={"OpenStack-API-Version": "clustering 1.3"},
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "The data provided is not a map"
    # a null body of a metadata merge or replace reads as {}; of a key's set, it is refused
    metadata = paths["/v1/clusters/{cluster_id}/metadata"]
    assert metadata["post"]["requestBody"]["required"] is False
    assert metadata["put"]["requestBody"]["required"] is False
    assert paths["/v1/clusters/{cluster_id}/metadata/{key}"]["put"]["requestBody"]["required"]
