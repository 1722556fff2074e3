"""``/openapi.json`` describes every request body with its model (the fuzzing tests need it)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

import herd.api.routers


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
