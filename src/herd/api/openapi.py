"""``/openapi.json`` written from the types the routes take and answer.

Routes take their bodies through the dependencies of :mod:`herd.api.bodies` (raw JSON
validated with Senlin's texts, not FastAPI's); each such dependency carries the model it
parses into, from which :func:`document_bodies` writes the operation's ``requestBody``
(``#/components/schemas/<Model>``). This module puts every request model, and the models
they nest, into those components, and Senlin's error body under every 4xx.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import TypeAdapter
from starlette.routing import BaseRoute

from herd.api.bodies import BodyDoc, body_doc
from herd.api.schemas.base import all_request_models
from herd.api.schemas.documented import NOT_BLANK

REF_TEMPLATE = "#/components/schemas/{model}"
ERROR_REF = {"$ref": "#/components/schemas/SenlinError"}
#: Senlin's error body (api/errors.py), which every 4xx and 5xx answer carries
ERROR_SCHEMA: dict[str, object] = {
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
#: no string herd takes may hold NUL (api/input_guard.py). Lone UTF-16 surrogates are refused
#: too, but a pattern cannot say so portably: ECMA-262 regexes (JSON Schema's) without the
#: ``u`` flag see UTF-16 code units, where ``[^\ud800-\udfff]`` would refuse every emoji.
NO_NUL = r"^[^\u0000]*$"
#: :data:`herd.api.schemas.base.NOT_BLANK` and no NUL
NO_NUL_NOT_BLANK = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
#: ``responses=`` of routes that answer 202 with no body, only a ``Location`` (Senlin's deletes)
ACCEPTED_WITHOUT_BODY: dict[int | str, dict[str, object]] = {
    202: {"description": "Accepted: the action is at the Location header; no body."},
}
#: and of deletes, which answer 204 when the resource is already being deleted
DELETE_ACCEPTED: dict[int | str, dict[str, object]] = {
    **ACCEPTED_WITHOUT_BODY,
    204: {"description": "Already being deleted: nothing new was started."},
}


#: the view types routes answer with (:func:`answers`), put into the components
RESPONSE_VIEWS: dict[str, type] = {}


def answers(
    key: str | None,
    view: type,
    *,
    many: bool = False,
    status: int = 200,
    description: str = "OK",
) -> dict[int | str, dict[str, object]]:
    """``responses=`` of a route answering ``{key: view}`` (``{key: [view, ...]}`` if ``many``,
    ``view`` itself if ``key`` is None).

    ``view`` is a TypedDict of :mod:`herd.api.view_models`; its JSON schema is made from the
    type when ``/openapi.json`` is built, and nothing checks answers at run time.
    """
    RESPONSE_VIEWS[view.__name__] = view
    item: dict[str, object] = {"$ref": REF_TEMPLATE.format(model=view.__name__)}
    value = {"type": "array", "items": item} if many else item
    schema = value
    if key is not None:
        schema = {"type": "object", "required": [key], "properties": {key: value}}
    return {
        status: {"description": description, "content": {"application/json": {"schema": schema}}}
    }


def response_schemas() -> dict[str, object]:
    """JSON schemas of the views named by :func:`answers`, keyed by type name."""
    schemas: dict[str, object] = {}
    for name, view in sorted(RESPONSE_VIEWS.items()):
        schema = TypeAdapter(view).json_schema(ref_template=REF_TEMPLATE)
        for nested, nested_schema in schema.pop("$defs", {}).items():
            schemas.setdefault(nested, nested_schema)
        schemas[name] = schema
    return schemas


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


def request_body(doc: BodyDoc) -> dict[str, object]:
    """The ``requestBody`` of an operation whose body is ``doc.model`` (maybe wrapped)."""
    schema: dict[str, object] = {"$ref": REF_TEMPLATE.format(model=doc.model.__name__)}
    if doc.envelope is not None:
        schema = {
            "type": "object",
            "properties": {doc.envelope: schema},
            "required": [doc.envelope],
            # Senlin read its key and ignored the rest of the body: so does herd (base.py)
            "additionalProperties": True,
        }
    if not doc.required:
        # An optional body may also be JSON null, which reads as no body at all.
        schema = {"anyOf": [schema, {"type": "null"}]}
    return {"required": doc.required, "content": {"application/json": {"schema": schema}}}


def _body_doc(dependant: Dependant) -> BodyDoc | None:
    for dependency in dependant.dependencies:
        found = body_doc(dependency.call) or _body_doc(dependency)
        if found is not None:
            return found
    return None


def _api_routes(routes: Iterable[BaseRoute]) -> Iterator[tuple[str, APIRoute]]:
    """(path template, route) of every API route in the schema.

    FastAPI >= 0.160 keeps an included router's routes behind one route whose
    ``effective_route_contexts()`` gives their final paths (as ``keystone.route_templates``
    reads them); older versions list them one by one.
    """
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is not None:
            for context in contexts():
                original = context.original_route
                if isinstance(original, APIRoute) and context.include_in_schema:
                    yield str(context.path_format), original
        elif isinstance(route, APIRoute) and route.include_in_schema:
            yield route.path_format, route


def document_bodies(app: FastAPI, document: dict[str, Any]) -> None:
    """Write each operation's ``requestBody`` from the model its body dependency parses into.

    FastAPI only sees the raw ``Body(None)`` the dependencies read (any JSON).
    """
    paths = document.get("paths", {})
    for path, route in _api_routes(app.routes):
        doc = _body_doc(route.dependant)
        if doc is None:
            continue
        for method in route.methods or ():
            operation = paths.get(path, {}).get(method.lower())
            if operation is not None:
                operation["requestBody"] = request_body(doc)


def _is_string(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    options = schema.get("anyOf", [])
    return (
        kind == "string"
        or (isinstance(kind, list) and "string" in kind)
        or any(isinstance(o, dict) and o.get("type") == "string" for o in options)
    )


def forbid_nul(schema: object) -> None:
    """Give every string of ``schema`` (walked whole) a pattern refusing NUL, as
    :mod:`herd.api.input_guard` refuses them.

    The keys of free maps (metadata) are refused with NUL too, but not documented as such:
    a ``propertyNames`` pattern on every free map made the fuzz test twice as slow.

    A string that already has an enum or an anchored pattern of its own needs none; the
    not-blank pattern of names becomes one that also refuses NUL.
    """
    if isinstance(schema, list):
        for item in schema:
            forbid_nul(item)
        return
    if not isinstance(schema, dict):
        return
    for value in schema.values():
        forbid_nul(value)
    if _is_string(schema) and "enum" not in schema:
        pattern = schema.get("pattern")
        if pattern is None:
            schema["pattern"] = NO_NUL
        elif pattern == NOT_BLANK:
            schema["pattern"] = NO_NUL_NOT_BLANK


def request_schemas() -> dict[str, object]:
    """JSON schemas of every request model, keyed by model name, nested ones included."""
    schemas: dict[str, object] = {}
    for model in all_request_models():
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        for name, nested in schema.pop("$defs", {}).items():
            schemas.setdefault(name, nested)
        schemas[model.__name__] = schema
    forbid_nul(schemas)
    return schemas


def document_parameters(document: dict[str, Any]) -> None:
    """The query parameters refuse NUL too (``input_guard.check_parameters``).

    So do path parameters, but the document does not say it there: Schemathesis' negative
    mode then searches for a URL-safe path value that breaks the pattern, which made the
    fuzz test (tests/functional/api/test_fuzz_openapi.py) five times slower.
    """
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query":
                    forbid_nul(parameter.get("schema"))


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` include the request models (built once, then cached)."""

    def build() -> dict[str, object]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                routes=app.routes,
            )
            components = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in {**request_schemas(), **response_schemas()}.items():
                components.setdefault(name, schema)
            document_bodies(app, document)
            document_parameters(document)
            document_errors(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]
