"""``herd cluster health <cluster>``: the health manager's view of a cluster.

Joins ``herd cluster`` (the ``app`` of :mod:`herd.cli.clusters`).
"""

from __future__ import annotations

from collections.abc import Mapping

import typer

from herd.cli.client import path
from herd.cli.clusters import app
from herd.cli.common import get_state
from herd.cli.output import Column, print_json, print_record, print_table, time_column
from herd.json_types import list_at, object_at

__all__ = ["app"]


def _check(row: Mapping[str, object]) -> str:
    result = row.get("last_check_result")
    if not result:
        return "never checked"
    mode = row.get("last_check_mode") or ""
    return f"{result} ({mode})" if mode else str(result)


def _reason(row: Mapping[str, object]) -> str:
    """The check's reason without the mode, which the 'last check' column shows."""
    reason = str(row.get("last_check_reason") or "")
    mode = row.get("last_check_mode") or ""
    prefix = f"{mode}: "
    return reason[len(prefix) :] if mode and reason.startswith(prefix) else reason


def _recoveries(row: Mapping[str, object]) -> str:
    total, streak = row.get("recoveries") or 0, row.get("recoveries_in_a_row") or 0
    return f"{total} ({streak} in a row)" if streak else str(total)


HEALTH_COLUMNS = [
    Column("name", "name"),
    Column("index", "index"),
    Column("status", "status"),
    time_column("checked_at", "last_checked_at"),
    Column("last check", _check),
    Column("reason", _reason),
    Column("failures", "failures"),
    Column("recoveries", _recoveries),
    Column("last recovery", "last_recovery_result"),
    time_column("backoff_until"),
]


def _summary(body: Mapping[str, object]) -> dict[str, object]:
    policy, lease = object_at(body, "policy"), object_at(body, "lease")
    summary = object_at(body, "summary")
    return {
        "cluster": f"{body.get('cluster_name')} ({body.get('cluster_id')})",
        "status": body.get("status"),
        "checking": body.get("checking"),
        "suspended_by": body.get("suspended_by"),
        "policy": policy.get("name"),
        "detection_modes": ", ".join(map(str, list_at(policy, "detection_modes"))),
        "interval": policy.get("interval"),
        "recovery": policy.get("recovery_action"),
        "lease_engine": lease.get("engine_id"),
        "lease_renewed_at": lease.get("renewed_at"),
        "members": summary.get("members"),
        "unhealthy": summary.get("unhealthy"),
        "recoveries": summary.get("recoveries"),
        "in_backoff": summary.get("in_backoff"),
    }


@app.command("health")
def health(ctx: typer.Context, cluster: str) -> None:
    """Last health check per member, failures, recoveries and back-off (herd addition)."""
    state = get_state(ctx)
    body = state.client.get(path("clusters", cluster, "health")).body
    if state.json:
        print_json(body)
        return
    view = object_at(body, "cluster_health") if "cluster_health" in body else body
    print_record(_summary(view), title="cluster health")
    print_table(view.get("members", []), HEALTH_COLUMNS, full_id=state.full_id, title="members")
