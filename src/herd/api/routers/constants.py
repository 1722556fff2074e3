"""``GET /v1/constants`` (herd's addition): the server's names, for clients that show them.

The dashboard reads the API version it speaks and the names it filters and offers (action
names, statuses, adjustment types) here instead of carrying copies that drift from the
server's enums. Public, as ``GET /v1`` is: names only, nothing of any project.
"""

from __future__ import annotations

from fastapi import APIRouter
from typing_extensions import TypedDict

from herd.api.microversion import MAX_VERSION, MIN_VERSION
from herd.api.openapi import answers
from herd.api.services.receivers import RECEIVER_ACTIONS
from herd.types import ActionName, ActionStatus, AdjustmentType, HealthStatus, NodeStatus

router = APIRouter(tags=["versions"])


class ApiVersions(TypedDict):
    min_version: str
    max_version: str


class Constants(TypedDict):
    """What ``GET /v1/constants`` answers under ``constants``."""

    api: ApiVersions
    #: every action name, and those of actions on a whole cluster
    action_names: list[str]
    cluster_action_names: list[str]
    #: the actions a webhook receiver may run
    receiver_action_names: list[str]
    action_statuses: list[str]
    node_statuses: list[str]
    health_statuses: list[str]
    adjustment_types: list[str]


def constants() -> Constants:
    actions = [name.value for name in ActionName]
    return {
        "api": {"min_version": str(MIN_VERSION), "max_version": str(MAX_VERSION)},
        "action_names": actions,
        "cluster_action_names": [name for name in actions if name.startswith("CLUSTER_")],
        "receiver_action_names": [name.value for name in RECEIVER_ACTIONS],
        "action_statuses": [status.value for status in ActionStatus],
        "node_statuses": [status.value for status in NodeStatus],
        "health_statuses": [status.value for status in HealthStatus],
        "adjustment_types": [kind.value for kind in AdjustmentType],
    }


@router.get("/v1/constants", response_model=None, responses=answers("constants", Constants))
def get_constants() -> dict[str, Constants]:
    return {"constants": constants()}
