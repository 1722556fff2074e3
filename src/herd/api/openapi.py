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
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]
