"""Request bodies as typed dependencies, which also write ``/openapi.json``'s request bodies.

A route declares ``request: Annotated[ClusterCreate, json_body(ClusterCreate, ...)]`` and
receives the validated model. The dependency reads the raw JSON body and validates it with
:func:`herd.api.schemas.base.parse_body`, so a bad body is refused with Senlin's texts (not
FastAPI's 422). The dependency carries a :class:`BodyDoc`, from which
:mod:`herd.api.openapi` writes the operation's ``requestBody``: the document comes from the
model the route takes, never from a hand-written ``openapi_extra``.

The parse runs after the caller is authenticated (it depends on :data:`Context`, which
FastAPI solves once per request and shares with the route's own ``ctx``), and after the
microversion check a route names with ``since``: the order of Senlin's checks is kept.

A route that must look at something else before the body (a webhook's secret; the one key
of an actions body, which picks the model) takes :func:`raw_body` instead: the decoded JSON
as ``object``, documented from the model it is later parsed into.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import Body, Depends

from herd.api.auth import Context
from herd.api.deps import Services, ServicesDep
from herd.api.microversion import APIVersion, require
from herd.api.schemas.base import RequestModel, parse_body

Model = TypeVar("Model", bound=RequestModel)

#: the name of the attribute a body dependency carries its :class:`BodyDoc` in
DOC_ATTRIBUTE = "herd_body"


@dataclass(frozen=True)
class BodyDoc:
    """What ``/openapi.json`` says of a route's body (read by :mod:`herd.api.openapi`)."""

    model: type[RequestModel]
    envelope: str | None = None
    required: bool = True


@dataclass(frozen=True)
class BodyRules:
    """How one route reads its body, beyond the model."""

    envelope: str | None = None
    #: Senlin read the body into a request object: its missing envelope text differs
    request_object: bool = False
    #: the microversion the route needs, checked before the body (``require``)
    since: str | None = None
    #: keys ignored below a microversion (fields an older version did not have)
    ignore_below: Mapping[str, APIVersion] = field(default_factory=dict)
    #: run-time values the model's fields read (``max_nodes_per_cluster``)
    context: Callable[[Services], Mapping[str, object]] | None = None


def json_body(
    model: type[Model],
    *,
    envelope: str | None = None,
    request_object: bool = False,
    since: str | None = None,
    ignore_below: Mapping[str, APIVersion] | None = None,
    context: Callable[[Services], Mapping[str, object]] | None = None,
    optional: bool = False,
) -> Any:
    """The dependency that gives a route its body as ``model`` (see the module docstring).

    ``optional``: the route takes a null or absent body, which reads as ``{}`` (the
    document then allows it).

    Returns ``Depends(...)``, typed as FastAPI's own ``Depends`` is, so that it can
    stand as a parameter's default as well as in ``Annotated``.
    """
    rules = BodyRules(envelope, request_object, since, dict(ignore_below or {}), context)

    async def parse(ctx: Context, services: ServicesDep, body: object = Body(None)) -> Model:
        # async: the parse is short, a hop to the thread pool would cost more than it
        if rules.since is not None:
            require(ctx.version, rules.since)
        ignore = [key for key, version in rules.ignore_below.items() if ctx.version < version]
        return parse_body(
            model,
            body,
            envelope=rules.envelope,
            request_object=rules.request_object,
            ignore=ignore,
            context=rules.context(services) if rules.context is not None else None,
        )

    setattr(parse, DOC_ATTRIBUTE, BodyDoc(model, envelope, required=not optional))
    return Depends(parse)


def raw_body(
    model: type[RequestModel], *, envelope: str | None = None, required: bool = True
) -> Any:
    """The decoded JSON body, documented as ``model`` (see the module docstring)."""

    async def read(body: object = Body(None)) -> object:
        return body

    setattr(read, DOC_ATTRIBUTE, BodyDoc(model, envelope, required))
    return Depends(read)


def body_doc(call: Callable[..., object] | None) -> BodyDoc | None:
    """The :class:`BodyDoc` of a dependency made here, else None."""
    doc = getattr(call, DOC_ATTRIBUTE, None)
    return doc if isinstance(doc, BodyDoc) else None
