"""``herd event``: list and show events."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import LimitOption, MarkerOption, SortOption, get_state, list_params
from herd.cli.output import Column, id_column, print_json, print_record, print_table, time_column

app = typer.Typer(help="Events: what happened to what, and when.", no_args_is_help=True)

EVENT_COLUMNS = [
    id_column(),
    time_column("generated_at", lambda row: row.get("generated_at") or row.get("timestamp")),
    Column("level", "level"),
    Column("otype", "otype"),
    Column("oname", "oname"),
    Column("action", "action"),
    Column("status", "status"),
    Column("status_reason", "status_reason"),
]


@app.command("list")
def list_(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option(help="Only events of this cluster.")] = None,
    oid: Annotated[str | None, typer.Option(help="Only events of this object id.")] = None,
    oname: Annotated[str | None, typer.Option(help="Only events of this object name.")] = None,
    otype: Annotated[str | None, typer.Option(help="Only CLUSTER, NODE, ... events.")] = None,
    level: Annotated[str | None, typer.Option(help="Only this level, e.g. ERROR.")] = None,
    action: Annotated[str | None, typer.Option(help="Only events of this action kind.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List events."""
    state = get_state(ctx)
    params = list_params(
        limit,
        marker,
        sort,
        cluster_id=cluster,
        oid=oid,
        oname=oname,
        otype=otype,
        level=level,
        action=action,
    )
    body = state.client.get(path("events"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("events", []), EVENT_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, event: str) -> None:
    """Show one event."""
    state = get_state(ctx)
    body = state.client.get(path("events", event)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("event", body))
