"""``/openapi.json`` with a schema for every request body.

Routers read raw JSON and validate it with :func:`herd.api.schemas.base.parse_body`
(so errors keep Senlin's texts); each such route names its model through
``openapi_extra=openapi_body(Model)``, which refers to
``#/components/schemas/<Model>``. This module puts every request model, and the
models they nest, into those components.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from herd.api.schemas.base import all_request_models

REF_TEMPLATE = "#/components/schemas/{model}"
ERROR_REF = {"$ref": "#/components/schemas/SenlinError"}
#: Senlin's error body (api/errors.py), which every 4xx and 5xx answer carries
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["code", "title", "explanation", "error"],
    "properties": {
        "code": {"type": "integer"},
        "title": {"type": "string"},
        "explanation": {"type": "string"},
        "error": {
            "type": "object",
            "required": ["code", "message", "type"],
            "properties": {
                "code": {"type": "integer"},
                "message": {"type": "string"},
                "type": {"type": "string"},
            },
        },
    },
}
ERRORS = {
    "400": "Invalid input: the message names the field and the reason.",
    "404": "A resource named in the path or the body does not exist (or is not visible).",
    "409": "The request conflicts with the resource's state or another action.",
    "413": "The request body is larger than max_request_body_bytes.",
}
BODY_METHODS = ("post", "put", "patch")
#: ``responses=`` of routes that answer 202 with no body, only a ``Location`` (Senlin's deletes)
ACCEPTED_WITHOUT_BODY: dict[int | str, dict[str, Any]] = {
    202: {"description": "Accepted: the action is at the Location header; no body."},
}
#: and of deletes, which answer 204 when the resource is already being deleted
DELETE_ACCEPTED: dict[int | str, dict[str, Any]] = {
    **ACCEPTED_WITHOUT_BODY,
    204: {"description": "Already being deleted: nothing new was started."},
}


def document_errors(document: dict[str, Any]) -> None:
    """Say what herd answers: Senlin's error body with 400/404/409/413, never a 422.

    FastAPI documents a 422 ``HTTPValidationError`` for every route with parameters;
    herd answers invalid input with 400 (api/errors.py), so the 422 would be a lie.
    """
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            wanted = ["400"]
            # a path id, or (in a body) a profile, policy, node or resource to adopt
            if "{" in path or method in BODY_METHODS:
                wanted.append("404")
            if method in (*BODY_METHODS, "delete"):
                wanted.append("409")
            if method in BODY_METHODS:
                wanted.append("413")
            for status in wanted:
                responses.setdefault(
                    status,
                    {
                        "description": ERRORS[status],
                        "content": {"application/json": {"schema": ERROR_REF}},
                    },
                )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["SenlinError"] = ERROR_SCHEMA


def request_schemas() -> dict[str, Any]:
    """JSON schemas of every request model, keyed by model name, nested ones included."""
    schemas: dict[str, Any] = {}
    for model in all_request_models():
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        for name, nested in schema.pop("$defs", {}).items():
            schemas.setdefault(name, nested)
        schemas[model.__name__] = schema
    return schemas


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` include the request models (built once, then cached)."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                routes=app.routes,
            )
            components = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in request_schemas().items():
                components.setdefault(name, schema)
            document_errors(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]
