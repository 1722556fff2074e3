"""``POST /v1/webhooks/<id>/trigger`` and ``POST /v1/webhooks/<id>/alertmanager``.

These routes take no ``X-Auth-Token``, even under ``auth: token``: the ``secret``
query parameter of the receiver's URL is the credential.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from herd.api.bodies import raw_body
from herd.api.deps import ServicesDep
from herd.api.schemas.base import parse_body
from herd.api.schemas.webhooks import AlertmanagerNotification, WebhookTrigger
from herd.api.services import webhooks as service
from herd.api.services.common import location
from herd.errors import InvalidRequest

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"])


def _json(raw: object) -> object:
    """The body as JSON also when the sender did not say it was (``curl -d``, say)."""
    if isinstance(raw, bytes | str):
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise InvalidRequest("The request body is not valid JSON.") from None
    return raw


@router.post(
    "/{receiver_id}/trigger",
    status_code=202,
)
def trigger_webhook(
    receiver_id: str,
    request: Request,
    services: ServicesDep,
    body: Annotated[object, raw_body(WebhookTrigger, required=False)],
) -> JSONResponse:
    query = dict(request.query_params)
    with services.database.write() as session:
        row = service.authenticate(session, receiver_id, query.get("secret"))
        parsed = parse_body(WebhookTrigger, _json(body))
        params = service.webhook_params(query.get("V"), query, parsed.params)
        action = service.trigger(session, services, row, params)
    return JSONResponse({"action": action.id}, status_code=202, headers=location(action.id))


@router.post(
    "/{receiver_id}/alertmanager",
    status_code=202,
)
def alertmanager_notification(
    receiver_id: str,
    request: Request,
    services: ServicesDep,
    body: Annotated[object, raw_body(AlertmanagerNotification)],
) -> JSONResponse:
    with services.database.write() as session:
        row = service.authenticate(session, receiver_id, request.query_params.get("secret"))
        payload = parse_body(AlertmanagerNotification, _json(body))
        outcome = service.alertmanager(session, services, row, payload)
    if outcome.action is None:
        return JSONResponse({"action": None, "message": outcome.reason}, status_code=200)
    action_id = outcome.action.id
    return JSONResponse(
        {"action": action_id, "message": outcome.reason},
        status_code=202,
        headers=location(action_id),
    )
