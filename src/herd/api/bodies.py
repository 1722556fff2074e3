"""Request bodies as typed dependencies.

A route declares ``request: Annotated[ClusterMetadata, json_body(ClusterMetadata)]``
and receives the validated model; the dependency reads the raw JSON body and
validates it with :func:`herd.api.schemas.base.parse_body`, so a bad body is
refused with Senlin's texts (not FastAPI's 422), and ``/openapi.json`` names the
model through the route's ``openapi_extra`` as before.

Dependencies run before the route's code: only a route whose first step was
parsing its body takes one (a route that checks the microversion first keeps
parsing in its code, so that check still answers first).
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Body, Depends

from herd.api.schemas.base import RequestModel, parse_body

Model = TypeVar("Model", bound=RequestModel)


def json_body(
    model: type[Model], *, envelope: str | None = None, request_object: bool = False
) -> Any:
    """The dependency that gives a route its body as ``model`` (see the module docstring).

    Args:
        model: The request model.
        envelope: The key Senlin wraps the body in (``{"receiver": {...}}``).
        request_object: Senlin read the body into a request object (creates): its text
            for a missing envelope differs (see :func:`parse_body`).
    """

    def parse(body: Any = Body(None)) -> Model:
        return parse_body(model, body, envelope=envelope, request_object=request_object)

    return Depends(parse)
