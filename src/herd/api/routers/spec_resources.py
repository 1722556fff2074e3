"""``/v1/profiles`` and ``/v1/policies``: one set of routes, built for each kind.

The two endpoints are the same but for their names, bodies and views
(api/services/spec_resources.py says what else differs), so they are built by one
function and cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fastapi import APIRouter, Path, Request, Response

from herd.api import pagination
from herd.api.auth import Context, ReaderContext, for_caller
from herd.api.bodies import json_body
from herd.api.deps import ServicesDep
from herd.api.openapi import answers
from herd.api.schemas.specs import SpecValidate
from herd.api.services import spec_resources as service
from herd.api.services.spec_resources import CreateRequest, SpecKind

#: the TypedDict of the kind's view (herd.api.view_models)
View = TypeVar("View", bound=Mapping[str, object])


def spec_router(
    spec: SpecKind[Any],
    view: Callable[[Any], View],
    view_type: type[View],
    validated_type: type[Mapping[str, object]],
) -> APIRouter:
    """The list, create, validate, show, update and delete routes of one kind.

    ``view_type`` is the TypedDict ``view`` returns, for ``/openapi.json``;
    ``validated_type`` the same for a validate answer (no id: nothing is stored).
    """
    kind, plural, model = spec.kind, spec.plural, spec.model
    router = APIRouter(prefix=f"/v1/{plural}", tags=[plural])
    list_spec = pagination.ListSpec(
        model=model,
        sort_keys={
            "type": model.type,
            "name": model.name,
            "created_at": model.created_at,
            "updated_at": model.updated_at,
        },
        default_sort=("created_at",),
        filters={"name": model.name, "type": model.type},
    )
    identity = Path(alias=f"{kind}_id")
    item = f"/{{{kind}_id}}"

    def list_all(request: Request, services: ServicesDep, ctx: ReaderContext) -> dict[str, object]:
        params = pagination.parse(request.query_params, list_spec)
        scope = ctx.list_scope(params.global_project)
        with services.database.read() as session:
            query = service.list_query(spec, ctx)
            rows = pagination.apply(session, query, list_spec, params, scope)
            return {plural: [for_caller(ctx, view(row)) for row in rows]}

    create_body = json_body(spec.create_request, envelope=kind, request_object=True)
    validate_body = json_body(SpecValidate, envelope=kind, request_object=True, since="1.2")
    update_body = json_body(spec.update_request, envelope=kind)

    def create(
        services: ServicesDep, ctx: Context, request: CreateRequest = create_body
    ) -> dict[str, object]:
        # validated before the transaction: a Nova profile's check asks the cloud
        parsed = spec.parse_spec(services, request.spec)
        with services.database.write() as session:
            row = service.create(session, services, ctx, spec, request, parsed)
            session.flush()
            return {kind: view(row)}

    def validate(
        services: ServicesDep, ctx: Context, request: SpecValidate = validate_body
    ) -> dict[str, object]:
        return {kind: view(service.validate(services, ctx, spec, request))}

    def show(services: ServicesDep, ctx: ReaderContext, ident: str = identity) -> dict[str, object]:
        with services.database.read() as session:
            return {kind: for_caller(ctx, view(service.find_visible(session, ctx, spec, ident)))}

    def update(
        services: ServicesDep, ctx: Context, ident: str = identity, request: object = update_body
    ) -> dict[str, object]:
        with services.database.write() as session:
            row = service.update(session, services, ctx, spec, ident, request)
            session.flush()
            return {kind: view(row)}

    def delete(services: ServicesDep, ctx: Context, ident: str = identity) -> Response:
        with services.database.write() as session:
            service.delete(session, services, ctx, spec, ident)
        return Response(status_code=204)

    router.add_api_route(
        "",
        list_all,
        methods=["GET"],
        name=f"list_{plural}",
        responses=answers(plural, view_type, many=True),
        openapi_extra=pagination.openapi_parameters(list_spec),
    )
    router.add_api_route(
        "",
        create,
        methods=["POST"],
        name=f"create_{kind}",
        status_code=201,
        responses=answers(kind, view_type, status=201),
    )
    router.add_api_route(
        "/validate",
        validate,
        methods=["POST"],
        name=f"validate_{kind}",
        responses=answers(kind, validated_type),
    )
    router.add_api_route(
        item, show, methods=["GET"], name=f"get_{kind}", responses=answers(kind, view_type)
    )
    router.add_api_route(
        item,
        update,
        methods=["PATCH"],
        name=f"update_{kind}",
        responses=answers(kind, view_type),
    )
    router.add_api_route(item, delete, methods=["DELETE"], name=f"delete_{kind}", status_code=204)
    return router
